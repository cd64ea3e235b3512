use ferromcp_macros::tool;

/// A key given twice.
#[tool(name = "a", name = "b")]
async fn ping() -> &'static str {
    "pong"
}

fn main() {}
