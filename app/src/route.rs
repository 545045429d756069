//! Which page a request is for, read from its address.
//!
//! The site has three pages, so a `match` on the path does what a router would, without a
//! router's code in the hydrate bundle (Leptos's router and what it instantiated were
//! about a tenth of the main module). Links between the pages are ordinary page loads; the
//! chat keeps its `?c=` up to date itself (`browser::replace_url`).

/// A page of the site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    /// `/`: the chat, `?c=<id>` a stored conversation, `?a=<assistant>` a preselection.
    Chat,
    /// `/bookings`: the person's bookings.
    Bookings,
    /// `/oauth/consent`: an app asks to act for the person.
    Consent,
    /// Any other path: the 404 page.
    NotFound,
}

impl Page {
    /// Every page the server renders under a path of its own (the rest fall to 404).
    pub const ALL: [Page; 3] = [Page::Chat, Page::Bookings, Page::Consent];

    /// The page's path; the 404 page has none of its own.
    pub fn path(self) -> Option<&'static str> {
        match self {
            Page::Chat => Some("/"),
            Page::Bookings => Some("/bookings"),
            Page::Consent => Some("/oauth/consent"),
            Page::NotFound => None,
        }
    }

    /// The page's title, as the browser's tab shows it.
    pub fn title(self, lang: shared::lang::Lang) -> &'static str {
        match self {
            Page::Chat | Page::NotFound => lang.pick(
                "datban — Đặt bàn cùng trợ lý",
                "datban — Book a table with an assistant",
            ),
            Page::Bookings => lang.pick("Đặt chỗ của tôi — datban", "My bookings — datban"),
            Page::Consent => lang.pick("Kết nối ứng dụng — datban", "Connect an app — datban"),
        }
    }

    /// The page at `path`, exactly (the server routes exactly these paths).
    pub fn at(path: &str) -> Self {
        Page::ALL
            .into_iter()
            .find(|page| page.path() == Some(path))
            .unwrap_or(Page::NotFound)
    }
}

/// A page's address: its path, and its query without the `?`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Address {
    /// The path, `/` for the chat.
    pub path: String,
    /// The query string without its `?` (empty when there is none).
    pub query: String,
}

impl Address {
    /// The address being rendered: on the server the request's, in the browser the address
    /// bar's when the page hydrates (the same one: a fragment is neither sent nor read).
    pub fn current() -> Self {
        #[cfg(feature = "ssr")]
        if let Some(parts) = leptos::prelude::use_context::<http::request::Parts>() {
            return Self {
                path: parts.uri.path().to_owned(),
                query: parts.uri.query().unwrap_or_default().to_owned(),
            };
        }
        #[cfg(feature = "hydrate")]
        if let Some(location) = web_sys::window().map(|window| window.location()) {
            return Self {
                path: location.pathname().unwrap_or_default(),
                query: location
                    .search()
                    .unwrap_or_default()
                    .trim_start_matches('?')
                    .to_owned(),
            };
        }
        Self {
            path: "/".to_owned(),
            ..Self::default()
        }
    }

    /// The query parameter `name`, decoded as a browser's `URLSearchParams` does (`+` is a
    /// space, `%XX` a byte, bad UTF-8 replaced); the first one when repeated, `None` when
    /// absent or empty.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query
            .split('&')
            .filter_map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (decode(key) == name).then(|| decode(value))
            })
            .next()
            .filter(|value| !value.is_empty())
    }

    /// The path and query, as a link back here is written (`/?c=…`).
    pub fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, self.query)
        }
    }
}

/// One `application/x-www-form-urlencoded` component, decoded.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let hex = |offset: usize| {
            bytes
                .get(at + offset)
                .and_then(|digit| (*digit as char).to_digit(16))
        };
        match (byte, hex(1), hex(2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                at += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                at += 1;
            }
            _ => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(query: &str) -> Address {
        Address {
            path: "/".to_owned(),
            query: query.to_owned(),
        }
    }

    #[test]
    fn each_path_is_its_page_and_nothing_else_is() {
        for page in Page::ALL {
            assert_eq!(page.path().map(Page::at), Some(page));
        }
        for other in [
            "",
            "/bookings/",
            "/Bookings",
            "/oauth",
            "/oauth/consent/x",
            "/api/chat",
            "/404",
        ] {
            assert_eq!(Page::at(other), Page::NotFound, "{other}");
        }
    }

    #[test]
    fn query_parameters_are_decoded_as_a_browser_does() {
        let address = at("c=conv_1&a=gifts&q=a+b%20c%2Fd&e=&bad=%zz%4&vi=%C4%91%E1%BA%B7t");
        assert_eq!(address.param("c").as_deref(), Some("conv_1"));
        assert_eq!(address.param("a").as_deref(), Some("gifts"));
        assert_eq!(address.param("q").as_deref(), Some("a b c/d"));
        assert_eq!(address.param("e"), None);
        assert_eq!(address.param("missing"), None);
        assert_eq!(address.param("bad").as_deref(), Some("%zz%4"));
        assert_eq!(address.param("vi").as_deref(), Some("đặt"));
        assert_eq!(at("c=1&c=2").param("c").as_deref(), Some("1"));
        assert_eq!(
            at("%63=encoded-key").param("c").as_deref(),
            Some("encoded-key")
        );
        assert_eq!(at("").param("c"), None);
    }

    #[test]
    fn each_page_has_its_title_in_each_language() {
        use shared::lang::Lang;
        for lang in Lang::ALL {
            let titles: Vec<_> = Page::ALL.into_iter().map(|page| page.title(lang)).collect();
            assert!(
                titles.iter().all(|title| title.contains("datban")),
                "{titles:?}"
            );
            assert_eq!(titles.len(), 3);
            assert!(titles[0] != titles[1] && titles[1] != titles[2] && titles[0] != titles[2]);
        }
        assert_eq!(Page::Bookings.title(Lang::En), "My bookings — datban");
        assert_eq!(Page::NotFound.title(Lang::Vi), Page::Chat.title(Lang::Vi));
    }

    #[test]
    fn a_link_back_keeps_the_query() {
        assert_eq!(at("c=abc").path_and_query(), "/?c=abc");
        assert_eq!(at("").path_and_query(), "/");
    }
}
