//! datban's user interface: the page shell, the chat page, the bookings page and the
//! consent page of apps that connect through OAuth.
//!
//! The same components render on the server (`ssr`) and hydrate in the browser
//! (`hydrate`); with neither feature the crate still type-checks, which keeps
//! `cargo test --workspace` from building both halves of Leptos at once.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    StaticSegment,
};

mod api;
mod bookings;
mod chat;
#[cfg(feature = "hydrate")]
mod client;
mod connect;
mod format;
mod lazy;
mod parts;
mod sse;
mod state;
mod view;

pub use bookings::BookingsPage;
pub use chat::ChatPage;
pub use connect::{ConnectedApps, ConsentPage};

/// The name the site's wasm, js and css files carry under `/pkg`.
pub const OUTPUT_NAME: &str = "datban";

/// The whole HTML document; the server renders it around [`App`].
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="vi">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="description" content="Đặt bàn nhà hàng bằng cách trò chuyện với trợ lý."/>
                <link rel="icon" href="/favicon.ico"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The root component: meta tags, stylesheet and routes.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();

    view! {
        <Stylesheet id="leptos" href=format!("/pkg/{OUTPUT_NAME}.css")/>
        <Title text="datban — Đặt bàn cùng trợ lý"/>
        <Router>
            <Routes fallback=NotFound>
                <Route path=StaticSegment("") view=ChatPage/>
                <Route path=StaticSegment("bookings") view=BookingsPage/>
                <Route path=(StaticSegment("oauth"), StaticSegment("consent")) view=ConsentPage/>
            </Routes>
        </Router>
    }
}

#[component]
fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <main class="not-found">
            <h1>"Không tìm thấy trang"</h1>
            <p><a href="/">"Về trang trò chuyện"</a></p>
        </main>
    }
}
