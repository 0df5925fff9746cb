use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(into = "String")]
pub struct Ticket {
    pub number: u32,
}

impl From<Ticket> for String {
    fn from(ticket: Ticket) -> String {
        format!("T-{}", ticket.number)
    }
}

fn main() {
    let _ = Ticket::contract();
}
