use ferromcp_macros::tool;

/// Generic.
#[tool]
async fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

/// An `impl Trait` argument makes the function generic too.
#[tool]
async fn echo_impl(value: impl ToString) -> String {
    value.to_string()
}

fn main() {}
