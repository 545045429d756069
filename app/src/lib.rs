//! datban's user interface: the page shell, the chat page, the bookings page and the
//! consent page of apps that connect through OAuth.
//!
//! The same components render on the server (`ssr`) and hydrate in the browser
//! (`hydrate`); with neither feature the crate still type-checks, which keeps
//! `cargo test --workspace` from building both halves of Leptos at once.

// A page rendered by a server built without the flag does not hydrate in a browser
// built with it (or the other way round), and that only shows in a browser.
#[cfg(not(erase_components))]
compile_error!(
    "build with `--cfg erase_components` (set in .cargo/config.toml; a RUSTFLAGS \
     variable replaces that list, so add it there too)"
);

use leptos::either::EitherOf4;
use leptos::prelude::*;

mod api;
mod bookings;
#[cfg(feature = "hydrate")]
mod browser;
mod chat;
#[cfg(feature = "hydrate")]
mod client;
mod connect;
mod format;
pub mod i18n;
mod labels;
mod lazy;
pub mod page_data;
mod parts;
mod reattach;
pub mod route;
mod skeleton;
mod sse;
mod state;
mod view;

pub use bookings::BookingsPage;
pub use chat::ChatPage;
pub use connect::{ConnectedApps, ConsentPage};

/// The name the site's wasm, js and css files carry under `/pkg`.
pub const OUTPUT_NAME: &str = "datban";

/// The whole HTML document; the server renders it around [`App`].
///
/// `<html lang>` is the request's language ([`i18n::lang`]): the browser reads it back
/// before hydrating, so both render the same words.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let lang = i18n::lang();
    // Each page is its own page load, so its title and stylesheet are written here once,
    // by the server: the browser's bundle needs no code for the document's head.
    let page = route::Page::at(&route::Address::current().path);
    view! {
        <!DOCTYPE html>
        <html lang=lang.code()>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta
                    name="description"
                    content=lang.pick(
                        "Đặt bàn nhà hàng bằng cách trò chuyện với trợ lý.",
                        "Book a restaurant table by chatting with an assistant.",
                    )
                />
                <link rel="icon" href="/favicon.ico"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <title>{page.title(lang)}</title>
                <link rel="stylesheet" id="leptos" href=format!("/pkg/{OUTPUT_NAME}.css")/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The root component: the page at the request's path.
#[component]
pub fn App() -> impl IntoView {
    view! {
        // The server renders these pages once their data is read (`page_data`), so the
        // HTML holds the conversation or the bookings, for a first paint and a page without
        // JavaScript alike (streamed, they would wait for a script to be moved in).
        {match route::Page::at(&route::Address::current().path) {
            route::Page::Chat => EitherOf4::A(view! { <ChatPage/> }),
            route::Page::Bookings => EitherOf4::B(view! { <BookingsPage/> }),
            route::Page::Consent => EitherOf4::C(view! { <ConsentPage/> }),
            route::Page::NotFound => EitherOf4::D(view! { <NotFound/> }),
        }}
    }
}

#[component]
fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    let t = i18n::t;
    view! {
        <main class="not-found">
            <i18n::LangSwitch/>
            <h1>{t("Không tìm thấy trang", "Page not found")}</h1>
            <p><a href="/">{t("Về trang trò chuyện", "Back to the chat")}</a></p>
        </main>
    }
}
