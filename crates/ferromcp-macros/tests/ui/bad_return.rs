use ferromcp_macros::tool;

/// A return type that is not a tool result.
#[tool]
async fn answer() -> u32 {
    42
}

fn main() {}
