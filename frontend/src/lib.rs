//! Hydrates the page the server rendered. Built only for wasm32 with `--features hydrate`.

// The pages' view types nest deeply (the bookings page with its connected apps), and the
// layout of their hydration futures is computed here, where they are instantiated.
#![recursion_limit = "256"]

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // `hydrate_body`, never `hydrate_lazy`: the build drops the async hydration paths that
    // only `hydrate_lazy` would run (`xtask/src/async_hydration.rs`).
    leptos::mount::hydrate_body(app::App);
}
