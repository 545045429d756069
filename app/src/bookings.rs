//! The "Đặt chỗ của tôi" page at `/bookings`: the owner's bookings, read from
//! `GET /api/bookings` in the browser. Cancelling is not done here but in the chat, where
//! the assistant's `cancelBooking` asks for a confirmation first.

use leptos::prelude::*;
use leptos_meta::Title;
use shared::tools::ListBookingsOutput;

use crate::{
    i18n::{t, LangSwitch},
    lazy::{lazy_part, preload},
    parts::{bookings_page_list, preload_bookings},
};

/// Where the list is.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
#[derive(Debug, Clone, PartialEq)]
enum Load {
    /// Not read yet (also what the server renders: the owner's cookie is read by the API).
    Loading,
    /// Read.
    Loaded(ListBookingsOutput),
    /// The request failed; the message says why.
    Failed(String),
}

/// The page at `/bookings`.
#[component]
pub fn BookingsPage() -> impl IntoView {
    let load = RwSignal::new(Load::Loading);
    let (hydrated, set_hydrated) = signal(false);

    let fetch = move || {
        load.set(Load::Loading);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let result =
                crate::client::get_json::<ListBookingsOutput>(crate::api::BOOKINGS_URL).await;
            // The page may be gone by now (the person navigated away).
            load.try_set(match result {
                Ok(list) => Load::Loaded(list),
                Err(error) => Load::Failed(error.message),
            });
        });
    };
    Effect::new(move |_| {
        set_hydrated.set(true);
        // The list's code is a chunk of its own: fetch it while the list is requested.
        preload(preload_bookings);
        untrack(fetch);
    });

    let body = move || match load.get() {
        Load::Loading => view! {
            <p class="loading-note" role="status" aria-busy="true">
                {t("Đang tải danh sách đặt chỗ…", "Loading your bookings…")}
            </p>
        }
        .into_any(),
        // Built in the browser, never hydrated (the server renders `Loading`).
        Load::Loaded(list) => lazy_part(bookings_page_list(list)).into_any(),
        Load::Failed(message) => view! {
            <div class="notice notice-error bookings-error" role="alert">
                <p class="notice-title">
                    {t("Không tải được danh sách đặt chỗ", "Could not load your bookings")}
                </p>
                <p class="notice-message">{message}</p>
                <button type="button" class="retry-button" on:click=move |_| fetch()>
                    {t("Thử lại", "Try again")}
                </button>
            </div>
        }
        .into_any(),
    };

    view! {
        <Title text=t("Đặt chỗ của tôi — datban", "My bookings — datban")/>
        <main class="chat bookings-page" data-hydrated=move || hydrated.get().to_string()>
            <header class="chat-header">
                <div class="chat-header-row">
                    <h1>{t("Đặt chỗ của tôi", "My bookings")}</h1>
                    <nav class="header-links" aria-label=t("Trang", "Pages")>
                        <a class="header-link" href="/">{t("Về trò chuyện", "Back to the chat")}</a>
                    </nav>
                    <LangSwitch/>
                </div>
                <p class="tagline">
                    {t(
                        "Muốn huỷ một đặt chỗ? Hãy nhắn cho trợ lý nhà hàng — bạn sẽ được hỏi xác nhận trước khi huỷ.",
                        "Want to cancel a booking? Message the restaurant assistant — you will be asked to confirm before anything is cancelled.",
                    )}
                </p>
            </header>
            <section class="bookings" aria-label=t("Danh sách đặt chỗ", "Bookings")>{body}</section>
            <crate::connect::ConnectedApps/>
        </main>
    }
}
