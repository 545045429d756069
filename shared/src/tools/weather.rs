//! `getWeather`: a read-only forecast for one city.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Access, Risk, Rule, Tool, ToolDefinition, ToolName, ValidationContext, ValidationIssue,
};

/// Marker type of the `getWeather` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetWeather;

/// Arguments of `getWeather`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetWeatherInput {
    /// City name as the user wrote it, e.g. "Hà Nội", "Da Nang", "Đà Lạt".
    #[schemars(length(min = 1, max = 100))]
    pub city: String,
    /// How many days to forecast, starting today (1 = today only).
    #[serde(default = "one_day")]
    #[schemars(range(min = 1, max = 7))]
    pub days: u8,
}

fn one_day() -> u8 {
    1
}

/// The sky, as a category the UI has an icon for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WeatherCondition {
    /// Clear sky.
    Sunny,
    /// Some clouds.
    PartlyCloudy,
    /// Overcast.
    Cloudy,
    /// Rain showers.
    Rain,
    /// Thunderstorms.
    Storm,
}

/// One day of a forecast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DailyForecast {
    /// The local date.
    pub date: NaiveDate,
    /// The sky.
    pub condition: WeatherCondition,
    /// Lowest temperature, °C.
    pub temp_min_c: i8,
    /// Highest temperature, °C.
    pub temp_max_c: i8,
    /// Chance of rain, percent.
    pub precipitation_chance: u8,
}

/// Result of `getWeather`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetWeatherOutput {
    /// The city's canonical name, e.g. "Hà Nội".
    pub city: String,
    /// One entry per requested day, starting today.
    pub days: Vec<DailyForecast>,
}

impl Tool for GetWeather {
    const NAME: ToolName = ToolName::GetWeather;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::GetWeather.as_str(),
        title: "Weather forecast",
        invoking: "Checking the forecast…",
        invoked: "Forecast ready",
        description: "Get the weather forecast for ONE city. Call it whenever the user asks about \
            weather, temperature or rain, or whether to sit outside. For two cities make two \
            calls in the same turn. Never describe the weather without calling it; report only \
            what it returns.",
        requires_approval: false,
        risk: Risk {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: true,
        },
        access: Access::Public,
    };
    type Input = GetWeatherInput;
    type Output = GetWeatherOutput;

    fn check(input: &Self::Input, _ctx: &ValidationContext) -> Vec<ValidationIssue> {
        if input.city.trim().is_empty() {
            vec![ValidationIssue::broke(
                "city",
                Rule::Blank,
                "must not be blank",
            )]
        } else {
            Vec::new()
        }
    }
}
