//! Views whose code the browser downloads only when one is first shown.
//!
//! A function marked `#[wasm_split(<chunk>, fallible)]` is cut out of the hydrate bundle by
//! the site build (`xtask/src/site.rs`) into `pkg/split_<chunk>.wasm`, together with
//! everything only it reaches; calling it fetches that file once, then runs the function.
//! Every tool part's view is in such a chunk, one per assistant, and so are the OAuth
//! consent form and the list of connected apps (`crate::connect`): the main bundle is what
//! makes a page work. The restaurant assistant's chunk, which most replies need, is
//! fetched as soon as the chat page is interactive. The `/bookings` page's list stays in
//! the main bundle: the server renders it and the browser hydrates it.
//!
//! On the server, and in any build that is not wasm, such a function is called directly.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll, Waker},
};

use leptos::prelude::*;

use crate::{
    i18n::t,
    skeleton::skeleton,
    view::{IntoPartView, PartView},
};

/// The code of a view could not be fetched (the network failed or the file is missing).
///
/// `#[wasm_split(.., fallible)]` turns a failed load into this error instead of a panic,
/// which in this bundle (`panic = immediate-abort`) would stop the whole page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkUnavailable;

impl From<wasm_split_helpers::SplitLoaderError> for ChunkUnavailable {
    fn from(_: wasm_split_helpers::SplitLoaderError) -> Self {
        // The loader has already logged why to the browser console.
        Self
    }
}

/// The view `render` makes: at once if its chunk is already loaded (or on the server),
/// else a placeholder until it is, or [`chunk_notice`] if it cannot be loaded.
///
/// Polling once first keeps a part that re-renders while it streams from waiting a tick
/// on every change once its chunk is there.
pub fn lazy_part<F>(render: F) -> PartView
where
    F: Future<Output = Result<PartView, ChunkUnavailable>> + Send + 'static,
{
    // Boxed here so that what follows is compiled once, not once per split point.
    lazy_boxed(Box::pin(render))
}

fn lazy_boxed(
    mut render: Pin<Box<dyn Future<Output = Result<PartView, ChunkUnavailable>> + Send>>,
) -> PartView {
    match render
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(Ok(view)) => view,
        Poll::Ready(Err(ChunkUnavailable)) => chunk_notice(),
        Poll::Pending => {
            let loading = RwSignal::new(true);
            let view = Suspend::new(async move {
                let view = render
                    .await
                    .unwrap_or_else(|ChunkUnavailable| chunk_notice());
                // The part may be gone by now (another view replaced it).
                loading.try_set(false);
                view
            });
            view! {
                {move || loading.get().then(|| skeleton(t("Đang tải…", "Loading…").to_owned(), None))}
                {view}
            }
            .into_part_view()
        }
    }
}

/// Said in place of a view whose code could not be loaded: the page itself still works.
pub fn chunk_notice() -> PartView {
    view! {
        <div class="notice notice-error chunk-error" role="alert" data-testid="chunk-error">
            <p class="notice-title">
                {t("Không tải được phần hiển thị này", "This part of the page could not be loaded")}
            </p>
            <p class="notice-message">
                {t(
                    "Có thể mạng đang chập chờn. Nội dung vẫn được lưu; tải lại trang để xem.",
                    "The network may be unreliable. Nothing is lost; reload the page to see it.",
                )}
            </p>
            <button type="button" class="retry-button" on:click=|_| reload_page()>
                {t("Tải lại trang", "Reload the page")}
            </button>
        </div>
    }
    .into_part_view()
}

/// Reloads the page (the server renders it again).
pub(crate) fn reload_page() {
    #[cfg(feature = "hydrate")]
    if let Some(window) = web_sys::window() {
        // Nothing more to do if even a reload cannot start.
        let _ = window.location().reload();
    }
}
