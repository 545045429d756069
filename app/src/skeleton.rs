//! The placeholder card every part shows while its input arrives or its tool runs, and
//! the chunk loader while a part's code is fetched.

use leptos::prelude::*;

use crate::view::{IntoPartView, PartView};

/// A placeholder card with a shimmer while a call's input arrives or the tool runs.
pub(crate) fn skeleton(title: String, detail: Option<String>) -> PartView {
    view! {
        <div class="card skeleton" aria-busy="true">
            <p class="skeleton-title">{title}</p>
            {detail.map(|detail| view! { <p class="skeleton-detail">{detail}</p> })}
            <div class="shimmer" aria-hidden="true">
                <span class="shimmer-line"></span>
                <span class="shimmer-line short"></span>
            </div>
        </div>
    }
    .into_part_view()
}
