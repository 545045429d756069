//! shipping_quote executor (being written).

use shared::tools::{ShippingQuoteInput, ShippingQuoteOutput};

use super::ExecError;

pub fn quote(_input: &ShippingQuoteInput) -> Result<ShippingQuoteOutput, ExecError> {
    Err(ExecError::Internal("shipping_quote is not built yet".into()))
}
