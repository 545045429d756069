//! Being written.

use leptos::prelude::*;

pub fn render_placeholder(state: &'static str) -> AnyView {
    super::skeleton(state.to_owned(), None)
}
