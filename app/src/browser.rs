//! The page as the browser holds it: its address, its scrolling, leaving it. Compiled
//! only with `hydrate`.

use wasm_bindgen::JsValue;

/// Leaves the page for `url` (another site: the connected app's redirect URI).
pub fn go_to(url: &str) {
    if let Some(window) = web_sys::window() {
        if window.location().assign(url).is_err() {
            leptos::logging::warn!("datban: could not go to {url}");
        }
    }
}

/// Replaces the page URL (no navigation, no history entry).
pub fn replace_url(url: &str) {
    let Some(history) = web_sys::window().and_then(|window| window.history().ok()) else {
        return;
    };
    if history
        .replace_state_with_url(&JsValue::NULL, "", Some(url))
        .is_err()
    {
        leptos::logging::warn!("datban: could not set the page URL to {url}");
    }
}

/// Whether the page is scrolled to (nearly) its end, so following new content is welcome.
pub fn near_page_end() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let Some(root) = window
        .document()
        .and_then(|document| document.document_element())
    else {
        return false;
    };
    let viewport = window
        .inner_height()
        .ok()
        .and_then(|height| height.as_f64())
        .unwrap_or(0.0);
    let scrolled = window.scroll_y().unwrap_or(0.0);
    scrolled + viewport >= f64::from(root.scroll_height()) - 160.0
}

/// Scrolls to the end of the page once the current updates are drawn.
pub fn scroll_to_page_end() {
    leptos::prelude::request_animation_frame(|| {
        let Some(window) = web_sys::window() else {
            return;
        };
        if let Some(root) = window
            .document()
            .and_then(|document| document.document_element())
        {
            window.scroll_to_with_x_and_y(0.0, f64::from(root.scroll_height()));
        }
    });
}
