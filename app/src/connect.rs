//! Connecting other apps (ChatGPT, Claude, any MCP client) to the person's datban through
//! OAuth: the consent page at `/oauth/consent?request=…` that `GET /oauth/authorize` sends
//! the browser to, and the list of connected apps on the bookings page.
//!
//! Both read their data in the browser: the server renders only a loading line, so the
//! page hydrates the same whatever the data turns out to be. The language is the page's
//! ([`crate::i18n::lang`]: the switch's cookie, else `Accept-Language`).
#![cfg_attr(not(feature = "hydrate"), allow(dead_code, unused_variables))]

use leptos::prelude::*;
#[cfg(feature = "hydrate")]
use serde_json::Value;
#[cfg(feature = "hydrate")]
use shared::http::ConsentRedirect;
use shared::http::{ConnectionList, ConsentRequest};

use crate::{
    i18n::{lang, t, Lang, LangSwitch},
    lazy::lazy_part,
    view::{IntoPartView, PartView},
};

/// What a scope lets the app do, as the person reads it before allowing it.
fn scope_text(lang: Lang, scope: &str) -> &'static str {
    match scope {
        "bookings" => lang.pick(
            "Tìm nhà hàng, xem các đặt chỗ của bạn, đặt bàn và huỷ đặt bàn thay bạn.",
            "Find restaurants, see your bookings, and book or cancel tables for you.",
        ),
        "checkout" => lang.pick(
            "Gợi ý quà, chuẩn bị và tạo đơn mua quà thay bạn (thanh toán thử nghiệm, không trừ tiền thật).",
            "Suggest gifts, and prepare and place gift orders for you (demo payments, no real money).",
        ),
        _ => lang.pick("Một quyền khác.", "Another permission."),
    }
}

fn scope_label(lang: Lang, scope: &str) -> &'static str {
    match scope {
        "bookings" => lang.pick("đặt bàn", "bookings"),
        "checkout" => lang.pick("mua quà", "gift orders"),
        _ => "?",
    }
}

/// "Cho phép" + name + this: what the app would do, by the MCP server it asks for.
fn question(lang: Lang, assistant: &str) -> (&'static str, &'static str) {
    let what = match assistant {
        "restaurant" => lang.pick(" đặt bàn thay bạn?", " to book tables for you?"),
        "gifts" => lang.pick(" mua quà thay bạn?", " to buy gifts for you?"),
        _ => lang.pick(" dùng datban thay bạn?", " to use datban for you?"),
    };
    (lang.pick("Cho phép ", "Allow "), what)
}

#[derive(Debug, Clone, PartialEq)]
enum Load<T> {
    Loading,
    Loaded(T),
    Failed(String),
}

/// The consent page: "Cho phép … đặt bàn thay bạn?" with Allow and Deny.
#[component]
pub fn ConsentPage() -> impl IntoView {
    let load = RwSignal::new(Load::<ConsentRequest>::Loading);
    let busy = RwSignal::new(false);
    let failure = RwSignal::new(None::<String>);
    let (hydrated, set_hydrated) = signal(false);

    Effect::new(move |_| {
        set_hydrated.set(true);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let Some(id) = crate::route::Address::current().param("request") else {
                load.set(Load::Failed(String::new()));
                return;
            };
            let url = shared::http::consent_request_url(&id);
            let result = crate::client::get_json::<Value>(&url).await;
            load.try_set(match result {
                Ok(value) => Load::Loaded(ConsentRequest::read(&value)),
                Err(error) => Load::Failed(error.message),
            });
        });
    });

    // The form is built in the browser only (the server renders the loading line), so its
    // code is a chunk fetched when a request has been read.
    let body = move || match load.get() {
        Load::Loading => view! {
            <p class="loading-note" role="status" aria-busy="true">{t("Đang tải…", "Loading…")}</p>
        }
        .into_part_view(),
        Load::Failed(message) => view! {
            <div class="notice notice-error" role="alert">
                <p class="notice-title">
                    {t(
                        "Yêu cầu kết nối không còn hiệu lực",
                        "This connection request has expired or was already answered.",
                    )}
                </p>
                <p>
                    {t(
                        "Hãy bắt đầu lại từ ứng dụng muốn kết nối.",
                        "Start again from the app you want to connect.",
                    )}
                </p>
                <p class="notice-message">{message}</p>
            </div>
        }
        .into_part_view(),
        Load::Loaded(request) => lazy_part(chunks::consent_form(request, busy, failure)),
    };

    view! {
        <main class="chat consent-page" data-hydrated=move || hydrated.get().to_string()>
            <header class="chat-header">
                <div class="chat-header-row">
                    <h1>{t("Kết nối ứng dụng", "Connect an app")}</h1>
                    <LangSwitch/>
                </div>
            </header>
            <section aria-label=t("Kết nối ứng dụng", "Connect an app")>{body}</section>
        </main>
    }
}

/// The question, what the app may do, and Allow / Deny, for a request that was read.
fn consent_form(
    request: ConsentRequest,
    busy: RwSignal<bool>,
    failure: RwSignal<Option<String>>,
) -> PartView {
    let id = StoredValue::new(request.request.clone());
    let answer = move |allow: bool| {
        busy.set(true);
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let answer = shared::http::ConsentAnswer {
                request: id.get_value(),
                allow,
            };
            let body = serde_json::to_string(&answer).unwrap_or_default();
            let result = crate::client::send_json::<Value>(
                gloo_net::http::Method::POST,
                shared::http::CONSENT_URL,
                Some(&body),
            )
            .await;
            match result {
                // The page stays busy while the browser leaves for the app.
                Ok(answer) => crate::browser::go_to(&ConsentRedirect::read(&answer).redirect),
                Err(error) => {
                    busy.set(false);
                    failure.set(Some(error.message));
                }
            }
        });
    };
    let lang = lang();
    let (before, after) = question(lang, &request.assistant);
    let scopes = request
        .scopes
        .iter()
        .map(|scope| view! { <li data-scope=scope.clone()>{scope_text(lang, scope)}</li> })
        .collect_view();
    let note = match lang {
        Lang::Vi => format!(
            "Nếu cho phép, bạn sẽ được chuyển về {}. Bạn có thể ngắt kết nối bất cứ lúc nào ở trang Đặt chỗ của tôi.",
            request.redirect_host
        ),
        Lang::En => format!(
            "If you allow it, you will be sent back to {}. You can disconnect it at any time on the My bookings page.",
            request.redirect_host
        ),
    };
    view! {
        <div class="consent">
            <h2 class="consent-question">
                {before}<strong class="consent-client">{request.client_name.clone()}</strong>{after}
            </h2>
            <p>{lang.pick("Ứng dụng sẽ được phép:", "The app will be able to:")}</p>
            <ul class="consent-scopes">{scopes}</ul>
            <p class="consent-note">{note}</p>
            {move || failure.get().map(|message| view! {
                <div class="notice notice-error" role="alert"><p>{message}</p></div>
            })}
            <div class="consent-actions">
                <button type="button" class="button-primary" disabled=move || busy.get()
                    on:click=move |_| answer(true)>
                    {lang.pick("Cho phép", "Allow")}
                </button>
                <button type="button" class="button-secondary" disabled=move || busy.get()
                    on:click=move |_| answer(false)>
                    {lang.pick("Từ chối", "Deny")}
                </button>
            </div>
        </div>
    }
    .into_part_view()
}

/// A stored UTC time (`YYYY-MM-DDTHH:MM:SS.mmmZ`) as the person reads it, in Việt Nam
/// time: read by position, since the server always writes that one form (chrono's
/// parser would add to the bundle).
fn when(lang: Lang, stored: &str) -> String {
    let number = |range: std::ops::Range<usize>| stored.get(range)?.parse::<u32>().ok();
    let at = (|| {
        let date = chrono::NaiveDate::from_ymd_opt(
            i32::try_from(number(0..4)?).ok()?,
            number(5..7)?,
            number(8..10)?,
        )?;
        date.and_hms_opt(number(11..13)?, number(14..16)?, 0)
    })();
    let Some(at) = at.map(|at| at + chrono::Duration::hours(7)) else {
        return String::new();
    };
    // In Việt Nam time, written as that offset, so the clock reads as it does there.
    let Some(at) = chrono::FixedOffset::east_opt(7 * 3600)
        .and_then(|offset| at.and_local_timezone(offset).single())
    else {
        return String::new();
    };
    format!(
        "{} {}",
        crate::format::time_hm(lang, &at),
        crate::format::day_month_year(lang, at.date_naive())
    )
}

/// The owner's connected apps with "Ngắt kết nối"; nothing at all when there are none.
#[component]
pub fn ConnectedApps() -> impl IntoView {
    let load = RwSignal::new(Load::<ConnectionList>::Loading);
    let failure = RwSignal::new(None::<String>);

    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let result = crate::client::get_json::<Value>(shared::http::CONNECTIONS_URL).await;
            load.try_set(match result {
                Ok(value) => Load::Loaded(ConnectionList::read(&value)),
                Err(error) => Load::Failed(error.message),
            });
        });
    });

    // Like the consent form, the list is built in the browser only: a chunk.
    move || match load.get() {
        Load::Loaded(list) if !list.connections.is_empty() => {
            lazy_part(chunks::connected_apps(list, load, failure))
        }
        _ => ().into_part_view(),
    }
}

/// The list of connected apps, each with "Ngắt kết nối".
fn connected_apps(
    list: ConnectionList,
    load: RwSignal<Load<ConnectionList>>,
    failure: RwSignal<Option<String>>,
) -> PartView {
    let disconnect = move |id: String| {
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let url = shared::http::connection_url(&id);
            match crate::client::send_json::<Value>(gloo_net::http::Method::DELETE, &url, None)
                .await
            {
                Ok(_) => load.update(|load| {
                    if let Load::Loaded(list) = load {
                        list.connections.retain(|c| c.id != id);
                    }
                }),
                Err(error) => failure.set(Some(error.message)),
            }
        });
    };
    let lang = lang();
    let items = list
        .connections
        .into_iter()
        .map(|connection| {
            let scopes = connection
                .scopes
                .iter()
                .map(|scope| scope_label(lang, scope))
                .collect::<Vec<_>>()
                .join(", ");
            let connected = format!(
                "{} {}",
                lang.pick("Kết nối lúc", "Connected"),
                when(lang, &connection.connected_at)
            );
            let used = connection.last_used_at.as_deref().map(|at| {
                format!(
                    "{} {}",
                    lang.pick(" · dùng lần cuối", " · last used"),
                    when(lang, at)
                )
            });
            let id = connection.id.clone();
            view! {
                <li class="connection" data-connection=connection.id.clone()>
                    <div>
                        <p class="connection-name">{connection.client_name}</p>
                        <p class="connection-meta">{scopes}" · "{connected}{used}</p>
                    </div>
                    <button type="button" class="button-secondary"
                        on:click=move |_| disconnect(id.clone())>
                        {lang.pick("Ngắt kết nối", "Disconnect")}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="connections" aria-label=lang.pick("Ứng dụng đã kết nối", "Connected apps")>
            <h2>{lang.pick("Ứng dụng đã kết nối", "Connected apps")}</h2>
            {move || failure.get().map(|message| view! {
                <div class="notice notice-error" role="alert"><p>{message}</p></div>
            })}
            <ul class="connection-list">{items}</ul>
        </section>
    }
    .into_part_view()
}

/// The split points of this module's views: in the browser each body runs from
/// `pkg/split_connect.wasm`, fetched at the first call (see `crate::lazy`). Few visits
/// connect an app, so its views are not in the main bundle.
mod chunks {
    use leptos::prelude::RwSignal;
    use shared::http::{ConnectionList, ConsentRequest};
    use wasm_split_helpers::wasm_split;

    use super::Load;
    use crate::{lazy::ChunkUnavailable, view::PartView};

    type Rendered = Result<PartView, ChunkUnavailable>;

    #[wasm_split(connect, fallible)]
    pub fn consent_form(
        request: ConsentRequest,
        busy: RwSignal<bool>,
        failure: RwSignal<Option<String>>,
    ) -> Rendered {
        Ok(super::consent_form(request, busy, failure))
    }

    #[wasm_split(connect, fallible)]
    pub fn connected_apps(
        list: ConnectionList,
        load: RwSignal<Load<ConnectionList>>,
        failure: RwSignal<Option<String>>,
    ) -> Rendered {
        Ok(super::connected_apps(list, load, failure))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_read_in_vietnam_time() {
        assert_eq!(
            when(Lang::Vi, "2026-11-29T20:05:00.000Z"),
            "03:05 30/11/2026"
        );
        assert_eq!(
            when(Lang::En, "2026-11-29T20:05:00.000Z"),
            "3:05 AM 30 Nov 2026"
        );
        assert_eq!(when(Lang::Vi, "garbage"), "");
    }

    #[test]
    fn answers_are_read_by_hand() {
        let value = serde_json::json!({
            "connections": [{"id": "grt_1", "clientName": "Claude", "scopes": ["bookings"],
                "connectedAt": "2026-11-29T03:00:00.000Z", "lastUsedAt": null}],
            "lang": "en",
        });
        let list = ConnectionList::read(&value);
        assert_eq!(list.connections[0].client_name, "Claude");
        assert_eq!(list.connections[0].last_used_at, None);
    }
}
