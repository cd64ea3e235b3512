use ferromcp_macros::tool;

/// An argument that is not an extractor.
#[tool]
async fn double(x: u32) -> String {
    (x * 2).to_string()
}

fn main() {}
