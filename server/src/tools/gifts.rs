//! GiftGenius executors (being written).

use shared::tools::{
    CheckoutDraft, CheckoutSession, CreateCheckoutSessionInput, PrepareCheckoutInput,
    SuggestGiftsInput, SuggestGiftsOutput,
};

use super::{ExecError, ToolContext};

pub async fn suggest(_input: &SuggestGiftsInput, _ctx: &ToolContext) -> Result<SuggestGiftsOutput, ExecError> {
    Err(ExecError::Internal("suggest_gifts is not built yet".into()))
}

pub async fn prepare(_input: &PrepareCheckoutInput, _ctx: &ToolContext) -> Result<CheckoutDraft, ExecError> {
    Err(ExecError::Internal("prepare_checkout is not built yet".into()))
}

pub async fn precheck(_input: &CreateCheckoutSessionInput, _ctx: &ToolContext) -> Result<CheckoutDraft, ExecError> {
    Err(ExecError::Internal("create_checkout_session is not built yet".into()))
}

pub async fn commit(_input: &CreateCheckoutSessionInput, _ctx: &ToolContext) -> Result<CheckoutSession, ExecError> {
    Err(ExecError::Internal("create_checkout_session is not built yet".into()))
}
