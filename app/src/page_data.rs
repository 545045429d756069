//! The data a page is rendered with: the owner's bookings for `/bookings`, a stored
//! conversation for `/?c=<id>`.
//!
//! Read while the server renders the page, so it arrives with its content (on first paint,
//! and without JavaScript), and sent along with the HTML for the browser to hydrate with
//! the same data. The server answers through a [`PageLoader`] it provides as context (it
//! knows the owner from the request's cookie); the browser, when it renders a page itself
//! (a link followed inside the app), asks the same API the page used to read.

use leptos::prelude::*;

/// What a page asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageQuery {
    /// All the owner's bookings, as `GET /api/bookings?all=1` lists them.
    Bookings,
    /// A conversation of the owner's, as `GET /api/conversations/{id}` returns it.
    Conversation(String),
}

impl PageQuery {
    /// The API request that answers the same.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn url(&self) -> String {
        match self {
            PageQuery::Bookings => crate::api::BOOKINGS_URL.to_owned(),
            PageQuery::Conversation(id) => crate::api::conversation_url(id),
        }
    }
}

/// The answer: the body of a successful API answer (JSON), or the status it failed with
/// (`None`: no answer at all) and what to tell the person.
pub type Fetched = Result<String, (Option<u16>, String)>;

/// The server's way of answering a [`PageQuery`] for the request being rendered.
#[cfg(feature = "ssr")]
pub trait LoadPage: Send + Sync {
    /// The answer to `query`, as the API would give it to this request.
    fn load(
        &self,
        query: PageQuery,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Fetched> + Send>>;
}

/// The loader the server provides as context for each page it renders.
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct PageLoader(pub std::sync::Arc<dyn LoadPage>);

/// Starts reading `query`: on the server through its [`PageLoader`], in the browser from
/// the API — unless the server already sent the answer with the page, which is then used
/// as it is (the future is never polled).
#[cfg(not(feature = "hydrate"))]
pub fn fetch(query: PageQuery) -> OnceResource<Fetched> {
    #[cfg(feature = "ssr")]
    let loader = use_context::<PageLoader>();
    OnceResource::new(async move {
        #[cfg(feature = "ssr")]
        if let Some(PageLoader(loader)) = loader {
            return loader.load(query).await;
        }
        let _ = query;
        Err((None, unavailable().to_owned()))
    })
}

/// Starts reading `query`: on the server through its [`PageLoader`], in the browser from
/// the API — unless the server already sent the answer with the page, which is then used
/// as it is (the future is never polled).
#[cfg(feature = "hydrate")]
pub fn fetch(query: PageQuery) -> OnceResource<Fetched> {
    use send_wrapper::SendWrapper;
    let future = async move {
        crate::client::get_text(&query.url())
            .await
            .map_err(|error| (error.status, error.message))
    };
    // The browser's requests are not `Send`; there is one thread in the browser, and the
    // future never leaves it.
    OnceResource::new(SendWrapper::new(future))
}

/// Said when there is nobody to ask (a page rendered outside the server).
#[cfg(not(feature = "hydrate"))]
fn unavailable() -> &'static str {
    crate::i18n::t(
        "Không đọc được dữ liệu của trang.",
        "The page's data cannot be read.",
    )
}

/// What a page says for an API answer with `status` and `body`: the server's message, or
/// a sentence in `lang` with the status (as the browser says it for its own requests).
pub fn failure(lang: crate::i18n::Lang, status: u16, body: &str) -> (Option<u16>, String) {
    (Some(status), crate::api::error_message(status, body, lang))
}

/// `body` read as `T`; a body that does not read says so in the person's language.
pub fn parse<T: serde::de::DeserializeOwned>(fetched: Fetched) -> Result<T, (Option<u16>, String)> {
    let body = fetched?;
    // Through `Value`, as `client::get_json` reads: straight from text would add a second
    // copy of every message part's deserializer to the hydrate bundle.
    serde_json::from_str::<serde_json::Value>(&body)
        .and_then(serde_json::from_value)
        .map_err(|_| {
            (
                None,
                crate::i18n::t(
                    "Máy chủ trả về dữ liệu không đọc được.",
                    "The server sent an answer that cannot be read.",
                )
                .to_owned(),
            )
        })
}
