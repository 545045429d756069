//! [`PartView`]: the type-erased view of a message part.
//!
//! On the server it is Leptos's `AnyView`. In the browser it is an erased view that can
//! only be built and rebuilt, never hydrated: the server renders no message parts (a
//! conversation is loaded in the browser, the bookings list too), so the hydration code an
//! `AnyView` carries for every type it erases — twice, sync and async — is dead weight,
//! and for the parts it was about a third of the hydrate bundle.

#[cfg(any(not(feature = "hydrate"), feature = "ssr"))]
mod imp {
    use leptos::prelude::{AnyView, IntoAny};

    /// A message part's view, of any type.
    pub type PartView = AnyView;

    /// Erases a view's type.
    pub trait IntoPartView {
        /// The view as a [`PartView`].
        fn into_part_view(self) -> PartView;
    }

    impl<T: IntoAny> IntoPartView for T {
        fn into_part_view(self) -> PartView {
            self.into_any()
        }
    }
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
mod imp {
    use std::any::{Any, TypeId};

    use leptos::tachys::{
        html::attribute::any_attribute::AnyAttribute,
        hydration::Cursor,
        renderer::{types, Rndr},
        view::{Mountable, Position, PositionState, Render, RenderHtml},
    };

    type Erased = Box<dyn Any + Send>;

    /// A message part's view, of any type; built in the browser only.
    pub struct PartView {
        type_id: TypeId,
        value: Erased,
        build: fn(Erased) -> PartViewState,
        rebuild: fn(Erased, &mut PartViewState),
    }

    /// Erases a view's type.
    pub trait IntoPartView {
        /// The view as a [`PartView`].
        fn into_part_view(self) -> PartView;
    }

    impl<T: RenderHtml + 'static> IntoPartView for T
    where
        T::State: 'static,
    {
        fn into_part_view(self) -> PartView {
            fn build<T: RenderHtml + 'static>(value: Erased) -> PartViewState
            where
                T::State: 'static,
            {
                let value = *value
                    .downcast::<T>()
                    .expect("a PartView holds its own type");
                let state: Box<dyn ErasedState> = Box::new(value.build());
                // A view that puts nothing in the page (`()`) still needs a place, so a
                // later view of another type knows where to go.
                let placeholder = (!T::EXISTS).then(Rndr::create_placeholder);
                PartViewState {
                    type_id: TypeId::of::<T>(),
                    state,
                    placeholder,
                }
            }
            fn rebuild<T: Render + 'static>(value: Erased, state: &mut PartViewState)
            where
                T::State: 'static,
            {
                let value = *value
                    .downcast::<T>()
                    .expect("a PartView holds its own type");
                let state = state
                    .state
                    .as_any_mut()
                    .downcast_mut::<T::State>()
                    .expect("rebuilt with the same type");
                value.rebuild(state);
            }
            PartView {
                type_id: TypeId::of::<T>(),
                value: Box::new(self),
                build: build::<T>,
                rebuild: rebuild::<T>,
            }
        }
    }

    trait ErasedState: Mountable {
        fn as_any_mut(&mut self) -> &mut dyn Any;
    }

    impl<S: Mountable + 'static> ErasedState for S {
        fn as_any_mut(&mut self) -> &mut dyn Any {
            self
        }
    }

    /// What a built [`PartView`] keeps.
    pub struct PartViewState {
        type_id: TypeId,
        state: Box<dyn ErasedState>,
        placeholder: Option<types::Placeholder>,
    }

    impl Mountable for PartViewState {
        fn unmount(&mut self) {
            self.state.unmount();
            if let Some(placeholder) = &mut self.placeholder {
                placeholder.unmount();
            }
        }

        fn mount(&mut self, parent: &types::Element, marker: Option<&types::Node>) {
            self.state.mount(parent, marker);
            if let Some(placeholder) = &mut self.placeholder {
                placeholder.mount(parent, marker);
            }
        }

        fn insert_before_this(&self, child: &mut dyn Mountable) -> bool {
            self.state.insert_before_this(child)
                || self
                    .placeholder
                    .as_ref()
                    .is_some_and(|placeholder| placeholder.insert_before_this(child))
        }

        fn elements(&self) -> Vec<types::Element> {
            self.state.elements()
        }
    }

    impl Render for PartView {
        type State = PartViewState;

        fn build(self) -> Self::State {
            (self.build)(self.value)
        }

        fn rebuild(self, state: &mut Self::State) {
            if self.type_id == state.type_id {
                (self.rebuild)(self.value, state);
                return;
            }
            // Another type: the new view takes the old one's place.
            let mut new = self.build();
            state.insert_before_this(&mut new);
            state.unmount();
            *state = new;
        }
    }

    leptos::tachys::no_attrs!(PartView);

    impl RenderHtml for PartView {
        type AsyncOutput = Self;
        type Owned = Self;

        const MIN_LENGTH: usize = 0;

        fn dry_resolve(&mut self) {}

        async fn resolve(self) -> Self::AsyncOutput {
            self
        }

        fn to_html_with_buf(
            self,
            _buf: &mut String,
            _position: &mut Position,
            _escape: bool,
            _mark_branches: bool,
            _extra_attrs: Vec<AnyAttribute>,
        ) {
            // The browser build renders no HTML; the server's PartView is an AnyView.
        }

        fn hydrate<const FROM_SERVER: bool>(
            self,
            _cursor: &Cursor,
            _position: &PositionState,
        ) -> Self::State {
            // The server never renders a part, so there is nothing to hydrate; should that
            // change, say so loudly rather than leave dead server HTML in the page.
            leptos::logging::error!("datban: a message part was hydrated; it is built only");
            self.build()
        }

        fn into_owned(self) -> Self::Owned {
            self
        }
    }
}

pub use imp::{IntoPartView, PartView};
