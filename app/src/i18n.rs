//! The page's language: which one it is ([`lang`]) and the switch between them.
//!
//! The server picks it per request (the `lang` cookie, else `Accept-Language`, else
//! Vietnamese: `server/src/page.rs`) and provides it as context; it writes it into
//! `<html lang>`, and the browser reads it back from there, so the hydrated page renders
//! the very words the server did.

use leptos::prelude::*;
pub use shared::lang::Lang;

/// The cookie the switch sets; the server reads it before `Accept-Language`.
pub const COOKIE: &str = "lang";

/// The path of the switch: `GET /lang/{code}?to=<path>` sets the cookie and goes back to
/// `to`. A plain link, so it works before (and without) the WebAssembly too.
pub const SWITCH_PATH: &str = "/lang";

/// The language of the page being rendered.
///
/// On the server it is the request's (context from `server/src/page.rs`); in the browser
/// the one the server wrote into `<html lang>`. Outside either (unit tests) Vietnamese.
#[cfg(not(feature = "hydrate"))]
pub fn lang() -> Lang {
    use_context::<Lang>().unwrap_or_default()
}

/// The language of the page being rendered.
///
/// In the browser there is one page per WebAssembly instance, so the language is read
/// once from `<html lang>` and kept in a static: no reactive owner is needed, which parts
/// built in a lazily loaded chunk or in a spawned task may not have.
#[cfg(feature = "hydrate")]
pub fn lang() -> Lang {
    use std::sync::atomic::{AtomicU8, Ordering};
    // 0: not read yet, 1: Vietnamese, 2: English.
    static LANG: AtomicU8 = AtomicU8::new(0);
    match LANG.load(Ordering::Relaxed) {
        1 => Lang::Vi,
        2 => Lang::En,
        _ => {
            let lang = web_sys::window()
                .and_then(|window| window.document())
                .and_then(|document| document.document_element())
                .and_then(|root| root.get_attribute("lang"))
                .and_then(|tag| Lang::parse(&tag))
                .unwrap_or_default();
            LANG.store(if lang == Lang::En { 2 } else { 1 }, Ordering::Relaxed);
            lang
        }
    }
}

/// The text of a pair written side by side, in the page's language.
pub fn t(vi: &'static str, en: &'static str) -> &'static str {
    lang().pick(vi, en)
}

/// Where the switch to `to` sends the browser to come back to `back` (a path of ours).
pub fn switch_url(to: Lang, back: &str) -> String {
    format!(
        "{SWITCH_PATH}/{}?to={}",
        to.code(),
        crate::api::encode_component(back)
    )
}

/// Whether `path` is a path of this site that the switch may send the browser back to:
/// absolute, and not `//host` or `/\host`, which browsers read as another site.
pub fn is_local_path(path: &str) -> bool {
    path.starts_with('/') && !path.starts_with("//") && !path.starts_with("/\\")
}

/// "Tiếng Việt | English": links that switch the page's language and come back here.
/// Each name is written in its own language (and tagged so), whatever the page's is.
#[component]
pub fn LangSwitch() -> impl IntoView {
    let current = lang();
    // The address the page was rendered for, the same on the server and in the hydrating
    // browser; the click handler below reads the address bar instead, which the chat
    // updates itself (`?c=`).
    let back = crate::route::Address::current().path_and_query();
    let links = Lang::ALL
        .into_iter()
        .enumerate()
        .map(|(index, option)| {
            let on_click = move |ev: leptos::ev::MouseEvent| {
                #[cfg(feature = "hydrate")]
                {
                    // Read now, not when the page hydrated: the chat keeps `?c=` up to date.
                    let here = crate::route::Address::current().path_and_query();
                    ev.prevent_default();
                    crate::browser::go_to(&switch_url(option, &here));
                }
                #[cfg(not(feature = "hydrate"))]
                let _ = ev;
            };
            view! {
                {(index > 0).then_some(view! { <span class="lang-sep" aria-hidden="true">" | "</span> })}
                <a
                    class="lang-option"
                    href=switch_url(option, &back)
                    hreflang=option.code()
                    lang=option.code()
                    rel="external nofollow"
                    data-lang=option.code()
                    aria-current=(option == current).then_some("true")
                    on:click=on_click
                >
                    {option.native_name()}
                </a>
            }
        })
        .collect_view();
    view! {
        <nav class="lang-switch" aria-label=t("Ngôn ngữ", "Language")>
            {links}
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_links_come_back_to_the_page() {
        assert_eq!(switch_url(Lang::En, "/?c=abc"), "/lang/en?to=%2F%3Fc%3Dabc");
        assert_eq!(switch_url(Lang::Vi, "/bookings"), "/lang/vi?to=%2Fbookings");
    }

    #[test]
    fn only_our_own_paths_are_local() {
        assert!(is_local_path("/"));
        assert!(is_local_path("/bookings?x=1"));
        assert!(!is_local_path("//evil.example/"));
        assert!(!is_local_path("/\\evil.example"));
        assert!(!is_local_path("https://evil.example/"));
        assert!(!is_local_path(""));
    }

    #[test]
    fn outside_a_page_the_language_is_vietnamese() {
        assert_eq!(lang(), Lang::Vi);
        assert_eq!(t("Gửi", "Send"), "Gửi");
        let owner = Owner::new();
        owner.with(|| {
            provide_context(Lang::En);
            assert_eq!(t("Gửi", "Send"), "Send");
        });
    }
}
