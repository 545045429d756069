//! `shared::tools::validate_arguments`: a model's argument text for one of the tools.
//!
//! Input: one byte choosing the tool (modulo the number of tools), then the argument text
//! (invalid UTF-8 replaced by U+FFFD). Checked: no panic; an accepted input is for that
//! tool, and its JSON (`ToolInput::to_json`, what is stored, streamed and re-validated when
//! a person edits a pending call) validates again to the same input.
#![no_main]

use chrono::DateTime;
use libfuzzer_sys::fuzz_target;
use shared::tools::{validate_arguments, ToolName, ValidationContext};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let tool = ToolName::ALL[usize::from(choice) % ToolName::ALL.len()];
    let raw = String::from_utf8_lossy(rest);
    // A fixed "now" (2026-06-01T12:00:00Z) keeps every run reproducible.
    let ctx = ValidationContext {
        now: DateTime::from_timestamp(1_780_315_200, 0).expect("a valid timestamp"),
    };
    let Ok(input) = validate_arguments(tool, &raw, &ctx) else {
        return;
    };
    assert_eq!(input.tool(), tool);
    let json = input.to_json().to_string();
    match validate_arguments(tool, &json, &ctx) {
        Ok(again) => assert_eq!(again, input, "{raw:?} became {json}"),
        Err(error) => panic!("{raw:?} was accepted, its JSON {json} is not: {error}"),
    }
});
