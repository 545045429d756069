//! The "Đặt chỗ của tôi" page at `/bookings`: the owner's bookings, rendered by the server
//! with the page (see `crate::page_data`), so they are there on first paint and without
//! JavaScript. Cancelling is not done here but in the chat, where the assistant's
//! `cancelBooking` asks for a confirmation first.

use leptos::{either::Either, prelude::*};
use shared::tools::ListBookingsOutput;

use crate::{
    i18n::{t, LangSwitch},
    page_data::{self, PageQuery},
    parts::bookings_page_list,
};

/// The page at `/bookings`.
#[component]
pub fn BookingsPage() -> impl IntoView {
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let data = page_data::fetch(PageQuery::Bookings);

    let body = move || {
        Suspend::new(async move {
            match page_data::parse::<ListBookingsOutput>(data.await) {
                // Hydrated like the rest of the page: it is in the main bundle, not a chunk.
                Ok(list) => Either::Left(bookings_page_list(list)),
                Err((_, message)) => Either::Right(view! {
                    <div class="notice notice-error bookings-error" role="alert">
                        <p class="notice-title">
                            {t("Không tải được danh sách đặt chỗ", "Could not load your bookings")}
                        </p>
                        <p class="notice-message">{message}</p>
                        // Reading again is rendering the page again.
                        <button
                            type="button"
                            class="retry-button"
                            on:click=|_| crate::lazy::reload_page()
                        >
                            {t("Thử lại", "Try again")}
                        </button>
                    </div>
                }),
            }
        })
    };

    view! {
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
            <section class="bookings" aria-label=t("Danh sách đặt chỗ", "Bookings")>
                <Suspense fallback=|| view! {
                    <p class="loading-note" role="status" aria-busy="true">
                        {t("Đang tải danh sách đặt chỗ…", "Loading your bookings…")}
                    </p>
                }>
                    {body}
                </Suspense>
            </section>
            <crate::connect::ConnectedApps/>
        </main>
    }
}
