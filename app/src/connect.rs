//! Connecting other apps (ChatGPT, Claude, any MCP client) to the person's datban through
//! OAuth: the consent page at `/oauth/consent?request=…` that `GET /oauth/authorize` sends
//! the browser to, and the list of connected apps on the bookings page.
//!
//! Both read their data in the browser, like the bookings list: the server renders only a
//! loading line, so the page hydrates the same whatever the data and the language turn
//! out to be. The language is the server's choice from `Accept-Language` (Vietnamese
//! unless the browser prefers English), sent with the data.
#![cfg_attr(not(feature = "hydrate"), allow(dead_code, unused_variables))]

use leptos::prelude::*;
use leptos_meta::Title;
use serde::Deserialize;

/// `GET /api/oauth/requests/{id}`: what the app asks for.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConsentRequest {
    request: String,
    client_name: String,
    scopes: Vec<String>,
    assistant: String,
    redirect_host: String,
    lang: String,
}

/// `POST /api/oauth/consent`'s answer: where the page goes next.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ConsentAnswer {
    redirect: String,
}

/// `GET /api/connections`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ConnectionList {
    connections: Vec<Connection>,
    lang: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    id: String,
    client_name: String,
    scopes: Vec<String>,
    connected_at: String,
    last_used_at: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Vi,
    En,
}

impl Lang {
    fn of(code: &str) -> Self {
        if code == "en" {
            Lang::En
        } else {
            Lang::Vi
        }
    }

    fn pick(self, vi: &'static str, en: &'static str) -> &'static str {
        match self {
            Lang::Vi => vi,
            Lang::En => en,
        }
    }
}

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
            let Some(id) = crate::client::query_param("request") else {
                load.set(Load::Failed(String::new()));
                return;
            };
            let url = format!("/api/oauth/requests/{}", crate::api::encode_component(&id));
            let result = crate::client::get_json::<ConsentRequest>(&url).await;
            load.try_set(match result {
                Ok(request) => Load::Loaded(request),
                Err(error) => Load::Failed(error.message),
            });
        });
    });

    let answer = move |allow: bool| {
        let Load::Loaded(request) = load.get_untracked() else {
            return;
        };
        busy.set(true);
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let body = serde_json::json!({"request": request.request, "allow": allow}).to_string();
            let result = crate::client::send_json::<ConsentAnswer>(
                "POST",
                "/api/oauth/consent",
                Some(&body),
            )
            .await;
            match result {
                // The page stays busy while the browser leaves for the app.
                Ok(answer) => crate::client::go_to(&answer.redirect),
                Err(error) => {
                    busy.set(false);
                    failure.set(Some(error.message));
                }
            }
        });
    };

    let body = move || match load.get() {
        Load::Loading => view! {
            <p class="loading-note" role="status" aria-busy="true">"Đang tải… · Loading…"</p>
        }
        .into_any(),
        Load::Failed(message) => view! {
            <div class="notice notice-error" role="alert">
                <p class="notice-title">"Yêu cầu kết nối không còn hiệu lực"</p>
                <p lang="en">"This connection request has expired or was already answered."</p>
                <p>"Hãy bắt đầu lại từ ứng dụng muốn kết nối. · Start again from the app."</p>
                <p class="notice-message">{message}</p>
            </div>
        }
        .into_any(),
        Load::Loaded(request) => {
            let lang = Lang::of(&request.lang);
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
                <div class="consent" lang=request.lang.clone()>
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
            .into_any()
        }
    };

    view! {
        <Title text="Kết nối ứng dụng — datban"/>
        <main class="chat consent-page" data-hydrated=move || hydrated.get().to_string()>
            <header class="chat-header">
                <div class="chat-header-row">
                    <h1>"Kết nối ứng dụng · Connect an app"</h1>
                </div>
            </header>
            <section aria-label="Kết nối ứng dụng">{body}</section>
        </main>
    }
}

/// A stored UTC time as the person reads it (Việt Nam time).
fn when(text: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .and_then(|at| chrono::FixedOffset::east_opt(7 * 3600).map(|vn| at.with_timezone(&vn)))
        .map(|at| {
            let date = at.date_naive();
            format!(
                "{} {}",
                crate::format::time_hm(&at),
                crate::format::day_month_year(date)
            )
        })
        .unwrap_or_default()
}

/// The owner's connected apps with "Ngắt kết nối"; nothing at all when there are none.
#[component]
pub fn ConnectedApps() -> impl IntoView {
    let load = RwSignal::new(Load::<ConnectionList>::Loading);
    let failure = RwSignal::new(None::<String>);

    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let result = crate::client::get_json::<ConnectionList>("/api/connections").await;
            load.try_set(match result {
                Ok(list) => Load::Loaded(list),
                Err(error) => Load::Failed(error.message),
            });
        });
    });

    let disconnect = move |id: String| {
        failure.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let url = format!("/api/connections/{}", crate::api::encode_component(&id));
            match crate::client::send_json::<serde_json::Value>("DELETE", &url, None).await {
                Ok(_) => load.update(|load| {
                    if let Load::Loaded(list) = load {
                        list.connections.retain(|c| c.id != id);
                    }
                }),
                Err(error) => failure.set(Some(error.message)),
            }
        });
    };

    // Erased (`AnyView`): the bookings page's view type is deep enough already that one
    // more nested type overflows the compiler's query depth in the hydrate build.
    move || {
        let Load::Loaded(list) = load.get() else {
            return ().into_any();
        };
        if list.connections.is_empty() {
            return ().into_any();
        }
        let lang = Lang::of(&list.lang);
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
                    when(&connection.connected_at)
                );
                let used = connection.last_used_at.as_deref().map(|at| {
                    format!(
                        "{} {}",
                        lang.pick(" · dùng lần cuối", " · last used"),
                        when(at)
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
        .into_any()
    }
}
