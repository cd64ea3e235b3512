use ferromcp_macros::tool;

/// A typo in a key.
#[tool(read_onyl)]
async fn ping() -> &'static str {
    "pong"
}

fn main() {}
