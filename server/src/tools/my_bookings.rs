//! listBookings / cancelBooking executors (being written).

use shared::tools::{BookingSummary, CancelBookingInput, CancelBookingOutput, ListBookingsInput, ListBookingsOutput};

use super::{ExecError, ToolContext};

pub async fn list(_input: &ListBookingsInput, _ctx: &ToolContext) -> Result<ListBookingsOutput, ExecError> {
    Err(ExecError::Internal("listBookings is not built yet".into()))
}

pub async fn precheck(_input: &CancelBookingInput, _ctx: &ToolContext) -> Result<BookingSummary, ExecError> {
    Err(ExecError::Internal("cancelBooking is not built yet".into()))
}

pub async fn cancel(_input: &CancelBookingInput, _ctx: &ToolContext) -> Result<CancelBookingOutput, ExecError> {
    Err(ExecError::Internal("cancelBooking is not built yet".into()))
}
