//! The widget: one self-contained HTML file (inline script and style, no network, no WASM:
//! hosts' default CSP forbids both) that renders every tool's result as the page does.
//!
//! Hosts cache widget HTML by URI, so the URI carries a hash of the file: a new build gets
//! a new URI, and old URIs (which mobile apps keep) still answer, with the current file —
//! whose script checks the version of the `structuredContent` it is given.

use std::sync::OnceLock;

use rmcp::model::{JsonObject, MetaObject, ReadResourceResult, Resource, ResourceContents};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The widget's HTML, as built into the server.
const HTML: &str = include_str!("widget.html");

/// The MCP Apps media type (SEP-1865); ChatGPT, Claude and others render it.
pub const APP_MIME: &str = "text/html;profile=mcp-app";
/// The ChatGPT Apps SDK's original widget media type.
pub const SKYBRIDGE_MIME: &str = "text/html+skybridge";

const URI_PREFIX: &str = "ui://datban/widget-";

fn hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let digest = Sha256::digest(HTML.as_bytes());
        digest[..6].iter().map(|b| format!("{b:02x}")).collect()
    })
}

/// The URI of the widget in its MCP Apps form.
pub fn app_uri() -> String {
    format!("{URI_PREFIX}{}.html", hash())
}

/// The URI of the widget in its Apps SDK (skybridge) form.
pub fn skybridge_uri() -> String {
    format!("{URI_PREFIX}{}.skybridge.html", hash())
}

/// The `io.modelcontextprotocol/ui` extension this server supports.
pub fn extension_capabilities() -> rmcp::model::ExtensionCapabilities {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), json!([APP_MIME]));
    [("io.modelcontextprotocol/ui".to_owned(), settings)]
        .into_iter()
        .collect()
}

const DESCRIPTION: &str = "Shows datban's result as a card: the forecast, restaurants, gift \
    ideas, a shipping quote, the person's bookings, a receipt for what was really done, or the \
    confirmation form for a booking, cancellation or purchase waiting for the person's click.";

fn meta(mime: &str) -> MetaObject {
    let value = if mime == APP_MIME {
        json!({
            "ui": {
                "csp": { "connectDomains": [], "resourceDomains": [] },
                "prefersBorder": true
            }
        })
    } else {
        json!({
            "openai/widgetCSP": { "connect_domains": [], "resource_domains": [] },
            "openai/widgetDomain": "https://datban.app",
            "openai/widgetPrefersBorder": true,
            "openai/widgetDescription": DESCRIPTION
        })
    };
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject(JsonObject::new()),
    }
}

/// The widget resources, as `resources/list` shows them.
pub fn resources() -> Vec<Resource> {
    [(app_uri(), APP_MIME), (skybridge_uri(), SKYBRIDGE_MIME)]
        .into_iter()
        .map(|(uri, mime)| {
            Resource::new(uri, "datban widget")
                .with_title("datban")
                .with_description(DESCRIPTION)
                .with_mime_type(mime)
                .with_meta(meta(mime))
        })
        .collect()
}

/// The widget at `uri`: the current one, or an older build's URI (answered with the
/// current file); `None` for anything else.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    let name = uri.strip_prefix(URI_PREFIX)?;
    let mime = if let Some(hash) = name.strip_suffix(".skybridge.html") {
        plausible_hash(hash).then_some(SKYBRIDGE_MIME)?
    } else {
        plausible_hash(name.strip_suffix(".html")?).then_some(APP_MIME)?
    };
    Some(ReadResourceResult::new(vec![ResourceContents::text(
        HTML, uri,
    )
    .with_mime_type(mime)
    .with_meta(meta(mime))]))
}

fn plausible_hash(hash: &str) -> bool {
    (1..=64).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uri_follows_the_file_and_old_uris_still_answer() {
        assert!(app_uri().contains(hash()));
        assert_eq!(hash().len(), 12);
        assert!(read(&app_uri()).is_some());
        assert!(read(&skybridge_uri()).is_some());
        assert!(read("ui://datban/widget-0123456789ab.html").is_some());
        assert!(read("ui://datban/widget-../../etc.html").is_none());
        assert!(read("ui://datban/other.html").is_none());
        assert!(read("https://datban/widget-abc.html").is_none());
    }
}
