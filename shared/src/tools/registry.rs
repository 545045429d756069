//! The one list of tools. Everything that enumerates tools is generated from it: the
//! [`ToolName`](super::ToolName) enum with its `ALL`, wire names, definitions, schemas and
//! assistants; the [`ToolInput`](super::ToolInput) enum; argument validation's dispatch;
//! and [`crate::message::ToolPart`] with its per-call methods; and, in the server, the
//! dispatch to each tool's executor (`shared::tool_registry!` is exported for it). What
//! stays written by hand, so that the compiler points at it when a tool is added: the
//! tool's own file (its `Tool` impl), its executor (the server's `Executor` impl) and the
//! app's renderer match.
//!
//! Each line is `(Type, "wireName", Assistant)`: the tool's type, which implements
//! [`Tool`](super::Tool) and names its enum variants, the name the model calls it by, and
//! the assistant it belongs to.

/// Calls `$callback! { ($($arg),*) [ (Type, "wireName", Assistant), … ] }` with the list.
#[macro_export]
macro_rules! tool_registry {
    ($callback:ident $(, $arg:tt)*) => {
        $callback! { ($($arg),*) [
            (GetWeather, "getWeather", Restaurant),
            (SearchRestaurants, "searchRestaurants", Restaurant),
            (CheckAvailability, "checkAvailability", Restaurant),
            (CreateBooking, "createBooking", Restaurant),
            (ListBookings, "listBookings", Restaurant),
            (CancelBooking, "cancelBooking", Restaurant),
            (SuggestGifts, "suggest_gifts", Gifts),
            (PrepareCheckout, "prepare_checkout", Gifts),
            (CreateCheckoutSession, "create_checkout_session", Gifts),
            (ShippingQuote, "shipping_quote", Shipping),
        ] }
    };
}
