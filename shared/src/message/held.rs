//! A tool's input and output as a message part holds them ([`Held`]).
//!
//! On the server they are the typed values. In the browser a part holds the JSON as it
//! arrived and the view that shows the call reads it into its types
//! ([`ToolState::read`]): every tool's view is in a lazily loaded chunk, so each tool's
//! readers (the derived `Deserialize` of its input and output, most of what serde puts in
//! the bundle) go with its view instead of into the main module every page downloads.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ToolState;

/// What a tool part holds of a call's input or output: `T` itself on the server; in the
/// browser `Unread<T>`, read into `T` by the view that shows it.
#[cfg(not(target_arch = "wasm32"))]
pub type Held<T> = T;

/// What a tool part holds of a call's input or output: `T` itself on the server; in the
/// browser `Unread<T>`, read into `T` by the view that shows it.
#[cfg(target_arch = "wasm32")]
pub type Held<T> = Unread<T>;

/// JSON the server sent as a `T`, not read yet (browser only).
#[cfg(target_arch = "wasm32")]
pub struct Unread<T> {
    json: Value,
    kind: std::marker::PhantomData<fn() -> T>,
}

#[cfg(target_arch = "wasm32")]
mod unread {
    use super::*;

    impl<T> Unread<T> {
        /// Holds `json` to be read as `T` later.
        pub fn new(json: Value) -> Self {
            Self {
                json,
                kind: std::marker::PhantomData,
            }
        }

        /// The JSON as it arrived.
        pub fn json(&self) -> &Value {
            &self.json
        }
    }

    impl<T: DeserializeOwned> Unread<T> {
        /// Reads the JSON as `T`; on failure gives the JSON back with serde's reason.
        pub(super) fn read(self) -> Result<T, (Value, String)> {
            T::deserialize(&self.json).map_err(|error| (self.json, error.to_string()))
        }
    }

    // By hand: derives would ask the same of `T`, which is never stored here.
    impl<T> Clone for Unread<T> {
        fn clone(&self) -> Self {
            Self::new(self.json.clone())
        }
    }

    impl<T> PartialEq for Unread<T> {
        fn eq(&self, other: &Self) -> bool {
            self.json == other.json
        }
    }

    impl<T> std::fmt::Debug for Unread<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.json.fmt(f)
        }
    }

    impl<T> serde::Serialize for Unread<T> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.json.serialize(serializer)
        }
    }

    impl<'de, T> serde::Deserialize<'de> for Unread<T> {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            Value::deserialize(deserializer).map(Self::new)
        }
    }
}

/// Takes `value` as a part's input or output: read into `X` on the server (an error says
/// why it is not one); kept as it is in the browser, for the view to read.
pub(crate) fn hold<X: DeserializeOwned>(value: Value) -> Result<Held<X>, String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        crate::by_hand::typed(value)
    }
    #[cfg(target_arch = "wasm32")]
    {
        Ok(Unread::new(value))
    }
}

/// The error a part shows when its arguments are not what the tool takes.
pub(crate) fn invalid_input<I, O>(input: Value, reason: &str) -> ToolState<I, O> {
    ToolState::OutputError {
        input: Some(input),
        error: crate::tools::ToolError::new(
            crate::tools::ErrorCode::ValidationError,
            format!("Invalid arguments: {reason}"),
        ),
    }
}

/// The error a part shows when the tool's result is not what the page can show: no
/// receipt for a result nobody can read.
pub(crate) fn unreadable_output<I, O>(input: Option<Value>) -> ToolState<I, O> {
    ToolState::OutputError {
        input,
        error: crate::tools::ToolError::new(
            crate::tools::ErrorCode::ExecutionFailed,
            "The tool returned a result this page cannot read.",
        ),
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl<I, O> ToolState<I, O> {
    /// The state with its input and output in their types, for the view that shows it:
    /// on the server they already are.
    pub fn read(self) -> Self {
        self
    }
}

#[cfg(target_arch = "wasm32")]
impl<I: DeserializeOwned, O: DeserializeOwned> ToolState<Unread<I>, Unread<O>> {
    /// The state with its input and output read into their types, for the view that shows
    /// it. What does not read as its type shows as the call having failed: arguments the
    /// tool does not take, or a result the page cannot read (never a receipt).
    pub fn read(self) -> ToolState<I, O> {
        let input = |held: Unread<I>| held.read().map_err(|(json, why)| invalid_input(json, &why));
        let read = || -> Result<ToolState<I, O>, ToolState<I, O>> {
            Ok(match self {
                ToolState::InputStreaming(streaming) => ToolState::InputStreaming(streaming),
                ToolState::InputAvailable { input: held } => ToolState::InputAvailable {
                    input: input(held)?,
                },
                ToolState::ApprovalRequested {
                    input: held,
                    preview,
                } => ToolState::ApprovalRequested {
                    input: input(held)?,
                    preview,
                },
                ToolState::ApprovalResponded {
                    input: held,
                    approved,
                } => ToolState::ApprovalResponded {
                    input: input(held)?,
                    approved,
                },
                ToolState::OutputAvailable {
                    input: held,
                    output,
                } => {
                    let json = held.json().clone();
                    let input = input(held)?;
                    let output = output.read().map_err(|_| unreadable_output(Some(json)))?;
                    ToolState::OutputAvailable { input, output }
                }
                ToolState::OutputError { input, error } => ToolState::OutputError { input, error },
                ToolState::OutputDenied { input: held } => ToolState::OutputDenied {
                    input: input(held)?,
                },
            })
        };
        read().unwrap_or_else(|failed| failed)
    }
}
