//! What the server gives the pages it renders: the person's language (the switch's
//! cookie, else `Accept-Language`, else Vietnamese), the switch itself, and the data a
//! page is rendered with (the owner's bookings, a stored conversation).

use std::{future::Future, pin::Pin, sync::Arc};

use app::i18n::{is_local_path, Lang, COOKIE};
use app::page_data::{Fetched, LoadPage, PageLoader, PageQuery};
use axum::{
    extract::{Path, Query},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use serde::Deserialize;
use shared::http::ApiCode;

use crate::{api, owner::OwnerId, AppState};

/// The language of a request: the `lang` cookie the switch set, else the best of
/// `Accept-Language`, else Vietnamese.
pub fn request_lang(headers: &HeaderMap) -> Lang {
    cookie_lang(headers)
        .or_else(|| {
            headers
                .get_all(header::ACCEPT_LANGUAGE)
                .iter()
                .filter_map(|value| value.to_str().ok())
                .find_map(Lang::from_accept_language)
        })
        .unwrap_or_default()
}

/// The language the `lang` cookie names, if it names one of ours.
fn cookie_lang(headers: &HeaderMap) -> Option<Lang> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| name.trim() == COOKIE)
        .and_then(|(_, value)| Lang::parse(value.trim().trim_matches('"')))
}

/// Leptos context for every rendered page: the page's Content-Security-Policy, the
/// request's language, which `app::i18n::lang` reads (and `<html lang>` carries to the
/// browser), and a [`PageLoader`] that reads the page's data as the request's owner.
pub fn provide_page_context(state: &AppState) {
    use leptos::prelude::{provide_context, use_context};
    crate::security::provide_page_csp();
    let parts = use_context::<axum::http::request::Parts>();
    let lang = parts
        .as_ref()
        .map(|parts| request_lang(&parts.headers))
        .unwrap_or_default();
    provide_context(lang);
    let owner = parts
        .as_ref()
        .and_then(|parts| parts.extensions.get::<OwnerId>())
        .map(|OwnerId(owner)| owner.clone());
    provide_context(PageLoader(Arc::new(Loader {
        state: state.clone(),
        owner,
        lang,
        response: use_context::<leptos_axum::ResponseOptions>(),
    })));
}

/// The hydrate bundle's chunk that holds the restaurant assistant's parts.
const RESTAURANT_CHUNK: &str = "restaurant";

/// The `Link` header that has the browser fetch the restaurant parts' chunk (and the
/// shared chunks it needs) alongside the main module, for a page that will wait for it:
/// the chat hydrates a stored conversation once its parts' code is there, and fetched
/// only after the main module those files cost a reload about a second on a slow
/// network. `None` when the site has no split manifest (a build without chunks).
fn restaurant_preload(options: &leptos::config::LeptosOptions) -> Option<&'static HeaderValue> {
    static PRELOAD: std::sync::OnceLock<Option<HeaderValue>> = std::sync::OnceLock::new();
    PRELOAD
        .get_or_init(|| {
            let pkg = options.site_pkg_dir.as_ref();
            let path = std::path::Path::new(options.site_root.as_ref())
                .join(pkg)
                .join("__wasm_split_manifest.json");
            let manifest = std::fs::read_to_string(path).ok()?;
            preload_header(&manifest, pkg, RESTAURANT_CHUNK)
        })
        .as_ref()
}

/// `Link: </pkg/chunk_6.wasm>; rel=preload; as=fetch; crossorigin, …` for the files
/// `chunk` needs, as the split's manifest lists them (`{"restaurant": ["chunk_6", …,
/// "split_restaurant"]}`). `crossorigin` makes the preload match the chunk loader's
/// `fetch()` (CORS mode, same-origin credentials), so the file is fetched once.
fn preload_header(manifest: &str, pkg: &str, chunk: &str) -> Option<HeaderValue> {
    let plain = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/'))
    };
    if !plain(pkg) {
        return None;
    }
    let manifest: serde_json::Value = serde_json::from_str(manifest).ok()?;
    let links = manifest
        .get(chunk)?
        .as_array()?
        .iter()
        .map(|file| {
            let file = file.as_str().filter(|file| plain(file))?;
            Some(format!(
                "</{pkg}/{file}.wasm>; rel=preload; as=fetch; crossorigin"
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    if links.is_empty() {
        return None;
    }
    HeaderValue::from_str(&links.join(", ")).ok()
}

/// Reads a page's data as the API would answer the same browser.
struct Loader {
    state: AppState,
    /// From the owner cookie (`owner::ensure_owner`); `None` only outside a request.
    owner: Option<String>,
    lang: Lang,
    /// The response's headers, for the chunk preload of a stored conversation.
    response: Option<leptos_axum::ResponseOptions>,
}

/// Largest error body read back from an API error (they are a sentence or two).
const ERROR_BODY_LIMIT: usize = 16 * 1024;

impl LoadPage for Loader {
    fn load(&self, query: PageQuery) -> Pin<Box<dyn Future<Output = Fetched> + Send>> {
        // The chat renders this conversation's parts, and hydrates once their code is
        // there: the browser may fetch it with the page.
        if let (PageQuery::Conversation(_), Some(response)) = (&query, &self.response) {
            if let Some(link) = restaurant_preload(&self.state.leptos_options) {
                response.append_header(header::LINK, link.clone());
            }
        }
        let state = self.state.clone();
        let owner = self.owner.clone();
        let lang = self.lang;
        Box::pin(async move {
            let Some(owner) = owner else {
                return Err(api_failure(lang, api::ApiError::not_found("Owner")).await);
            };
            let answer = match query {
                PageQuery::Bookings => api::bookings_list(&state, &owner, true)
                    .await
                    .map(|list| serde_json::to_string(&list)),
                PageQuery::Conversation(id) => api::conversation_body(&state, &owner, &id)
                    .await
                    .map(|body| serde_json::to_string(&body)),
            };
            match answer {
                Ok(Ok(json)) => Ok(json),
                Ok(Err(error)) => {
                    let error = api::ApiError::new(
                        ApiCode::Internal,
                        "Something went wrong on our side. Please try again.",
                    )
                    .caused_by(format_args!("cannot write a page's data as JSON: {error}"));
                    Err(api_failure(lang, error).await)
                }
                Err(error) => Err(api_failure(lang, error).await),
            }
        })
    }
}

/// What the page says for an API error: its status and message, as the browser would read
/// them from the API's answer.
async fn api_failure(lang: Lang, error: api::ApiError) -> (Option<u16>, String) {
    let mut response = error.into_response();
    let status = response.status().as_u16();
    // The page is rendered outside `/api/`'s layer, so its one log line is written here.
    if let Some(crate::error::Cause(cause)) =
        response.extensions_mut().remove::<crate::error::Cause>()
    {
        tracing::error!(status, %cause, "a page's data could not be read");
    }
    let body = axum::body::to_bytes(response.into_body(), ERROR_BODY_LIMIT)
        .await
        .unwrap_or_default();
    app::page_data::failure(lang, status, &String::from_utf8_lossy(&body))
}

/// `GET /lang/{code}?to=<path>`: the language switch.
pub fn routes() -> Router<AppState> {
    Router::new().route("/lang/{code}", get(switch))
}

/// The site's pages ([`app::route::Page`]), each at its exact path and rendered whole once
/// its data is read: the HTML holds the conversation or the bookings, for a first paint
/// and a page without JavaScript alike (streamed, they would wait for a script to be moved
/// in). Any other path falls to the site's fallback, which serves a file or the 404 page.
pub fn pages<V>(
    state: &AppState,
    shell: impl Fn() -> V + Clone + Send + Sync + 'static,
) -> Router<AppState>
where
    V: leptos::prelude::IntoView + 'static,
{
    // The executor the pages' tasks run on; Leptos's own route set-up starts it too.
    let _ = any_spawner::Executor::init_tokio();
    let context = {
        let state = state.clone();
        move || {
            leptos::prelude::provide_context(state.clone());
            provide_page_context(&state);
        }
    };
    let render = leptos_axum::render_app_async_with_context(context, shell);
    app::route::Page::ALL
        .into_iter()
        .filter_map(app::route::Page::path)
        .fold(Router::new(), |router, path| {
            router.route(path, get(render.clone()))
        })
}

#[derive(Debug, Deserialize)]
struct SwitchQuery {
    #[serde(default)]
    to: Option<String>,
}

/// Remembers the chosen language for a year and sends the browser back to the page it
/// came from (a path of ours only: anything else goes to `/`, so the link cannot be used
/// to send people to another site).
async fn switch(Path(code): Path<String>, Query(query): Query<SwitchQuery>) -> Response {
    let Some(lang) = Lang::parse(&code) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let back = query
        .to
        .filter(|path| is_local_path(path))
        .unwrap_or_else(|| "/".to_owned());
    let secure = std::env::var("DATBAN_SECURE_COOKIES").is_ok_and(|v| v == "1");
    let cookie = format!(
        "{COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax; HttpOnly{}",
        lang.code(),
        if secure { "; Secure" } else { "" }
    );
    // Both values are built from our own constants and a checked path; a path with
    // characters a header cannot carry goes to `/` instead.
    let location = HeaderValue::from_str(&back).unwrap_or(HeaderValue::from_static("/"));
    let Ok(cookie) = HeaderValue::from_str(&cookie) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    (
        StatusCode::SEE_OTHER,
        [(header::SET_COOKIE, cookie), (header::LOCATION, location)],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_preload_header_lists_the_chunks_files_from_the_manifest() {
        let manifest = r#"{"gifts": ["chunk_6", "split_gifts"],
            "restaurant": ["chunk_6", "chunk_10", "split_restaurant"]}"#;
        let header = super::preload_header(manifest, "pkg", "restaurant").unwrap();
        assert_eq!(
            header.to_str().unwrap(),
            "</pkg/chunk_6.wasm>; rel=preload; as=fetch; crossorigin, \
             </pkg/chunk_10.wasm>; rel=preload; as=fetch; crossorigin, \
             </pkg/split_restaurant.wasm>; rel=preload; as=fetch; crossorigin"
        );
    }

    #[test]
    fn no_preload_header_from_a_manifest_it_cannot_trust() {
        for manifest in [
            "",
            "not json",
            "[]",
            r#"{"gifts": ["split_gifts"]}"#,
            r#"{"restaurant": []}"#,
            r#"{"restaurant": "split_restaurant"}"#,
            r#"{"restaurant": ["split_restaurant", 3]}"#,
            r#"{"restaurant": ["split_restaurant>; rel=stylesheet"]}"#,
            r#"{"restaurant": ["../../etc/passwd"]}"#,
        ] {
            assert_eq!(
                super::preload_header(manifest, "pkg", "restaurant"),
                None,
                "{manifest}"
            );
        }
        let fine = r#"{"restaurant": ["split_restaurant"]}"#;
        assert_eq!(super::preload_header(fine, "pkg\r\nx", "restaurant"), None);
    }

    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn the_cookie_wins_over_the_browser() {
        let both = headers(&[
            (header::ACCEPT_LANGUAGE, "vi-VN,vi;q=0.9"),
            (header::COOKIE, "datban_owner=x; lang=en"),
        ]);
        assert_eq!(request_lang(&both), Lang::En);
        let browser = headers(&[(header::ACCEPT_LANGUAGE, "en-US,en;q=0.9")]);
        assert_eq!(request_lang(&browser), Lang::En);
        let chosen = headers(&[
            (header::ACCEPT_LANGUAGE, "en-US"),
            (header::COOKIE, "lang=vi"),
        ]);
        assert_eq!(request_lang(&chosen), Lang::Vi);
    }

    #[test]
    fn otherwise_vietnamese() {
        assert_eq!(request_lang(&HeaderMap::new()), Lang::Vi);
        let foreign = headers(&[
            (header::ACCEPT_LANGUAGE, "fr, de;q=0.5"),
            (header::COOKIE, "lang=fr; xlang=en"),
        ]);
        assert_eq!(request_lang(&foreign), Lang::Vi);
    }
}
