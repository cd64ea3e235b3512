use ferromcp_macros::tool;

/// Not async.
#[tool]
fn ping() -> &'static str {
    "pong"
}

fn main() {}
