use ferromcp_macros::tool;

struct Calculator;

impl Calculator {
    /// A method.
    #[tool]
    async fn ping(&self) -> &'static str {
        "pong"
    }
}

fn main() {}
