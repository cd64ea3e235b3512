use ferromcp_macros::tool;

/// Not a function.
#[tool]
struct Ping;

fn main() {}
