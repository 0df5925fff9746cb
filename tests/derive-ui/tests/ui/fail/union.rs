use contract_runtime::ToolOutput;

#[derive(ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub union Bits {
    pub int: u32,
    pub float: f32,
}

fn main() {}
