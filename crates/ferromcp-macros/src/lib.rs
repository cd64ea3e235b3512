//! Optional attribute macros for ferromcp.
//!
//! [`macro@tool`] is sugar over the builder: it keeps an `async fn` as written and adds a
//! companion function that returns the fn's `ToolDef` (name, description from the doc
//! comment, title, annotation hints). Everything it does can be written by hand with
//! `McpServer::builder(..).tool(ToolSpec::new(..)…, f)`; the macro only saves the spelling.
//!
//! [`macro@ferromcp_tool`] is the same macro for the `ferromcp` facade crate, which
//! re-exports it as `ferromcp::tool`.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod args;
mod expand;

use proc_macro::TokenStream;

/// Defines an MCP tool from an `async fn` whose arguments are extractors.
///
/// The function stays exactly as written (tests can call it directly); next to it the macro
/// generates a companion with the same visibility:
///
/// ```text
/// fn <fn name>_tool() -> ::ferromcp_server::mcp_server::ToolDef
/// ```
///
/// (a raw identifier loses its `r#`: `r#type` gets `type_tool`), carrying the function's
/// `#[cfg]` attributes. Register it with `McpServer::builder(..).tool_def(add_tool())` (a
/// private companion never registered draws the compiler's dead-code warning).
///
/// ```
/// use ferromcp_macros::tool;
/// use ferromcp_server::McpServer;
/// use ferromcp_server::mcp_server::Args;
///
/// /// Two numbers.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct AddArgs {
///     /// The first number.
///     a: f64,
///     /// The second number.
///     b: f64,
/// }
///
/// /// Adds two numbers.
/// #[tool(title = "Add", read_only, idempotent)]
/// async fn add(Args(args): Args<AddArgs>) -> String {
///     (args.a + args.b).to_string()
/// }
///
/// let server = McpServer::builder("calculator", "1.0.0")
///     .tool_def(add_tool())
///     .build()
///     .unwrap();
/// assert_eq!(server.tool_names(), ["add"]);
/// ```
///
/// # What the tool says about itself
///
/// - **name**: the function's name, or `name = "…"`.
/// - **description**: the doc comment (its lines joined with newlines, common indentation
///   removed, trimmed), or `description = "…"`, which wins. No doc and no key: none.
/// - **title**: `title = "…"` (the tool's display name).
/// - **app**: `app = "ui://…"` links the tool to an MCP App registered with
///   `McpServerBuilder::app` (`ToolSpec::app`: `_meta.ui.resourceUri`).
/// - **annotations**: `read_only`, `destructive`, `idempotent`, `open_world` set
///   `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint` to `true`;
///   `read_only = false` (and so on) sets a hint to `false`. None given: no annotations.
/// - **input schema**: from the `Args<T>` argument (`T`'s doc comments become the
///   properties' descriptions); **output schema**: from a `Json<T>` return type. The server
///   derives both, exactly as for a handler registered with `tool`.
///
/// # Paths
///
/// The generated code names `::ferromcp_server::mcp_server::{ToolDef, ToolSpec}` and nothing
/// else (no `serde_json`, no `ferromcp_types` in the caller's dependencies). Through the
/// `ferromcp` facade, use its `ferromcp::tool` ([`macro@ferromcp_tool`] here), which names
/// `::ferromcp::server` instead. A crate that re-exports the server elsewhere says where with
/// `crate = "path"`, e.g. `#[tool(crate = "my_sdk::server")]` expands to
/// `my_sdk::server::mcp_server::ToolDef`.
///
/// # What it refuses
///
/// `#[tool]` takes free `async fn`s with no generics and no `impl Trait` arguments. A method
/// (a `self` receiver) is refused: take shared state with the `State<T>` extractor, or
/// register a closure that captures it. Unknown keys are refused with the list of known ones.
///
/// Whether the arguments are extractors and the return type a tool result is the server's
/// business: a handler it refuses is reported on the function's name with the
/// `ToolHandler` trait's message (`… is not a valid MCP tool handler`), as it would be for
/// `McpServerBuilder::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_tool(attr, item, &quote::quote!(::ferromcp_server))
}

/// [`macro@tool`] for users of the `ferromcp` facade crate, which re-exports it as
/// `ferromcp::tool`: the same macro, whose generated code names
/// `::ferromcp::server::mcp_server::{ToolDef, ToolSpec}` by default (so a crate that
/// depends on `ferromcp` alone needs no `crate = "…"`). See [`macro@tool`] for the syntax.
#[proc_macro_attribute]
pub fn ferromcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_tool(attr, item, &quote::quote!(::ferromcp::server))
}

/// Parses `#[tool(...)]` and its item; `default_crate` is the server's path when the
/// attribute gives no `crate = "…"`.
fn expand_tool(
    attr: TokenStream,
    item: TokenStream,
    default_crate: &proc_macro2::TokenStream,
) -> TokenStream {
    let mut args = args::ToolArgs::default();
    let parser = syn::meta::parser(|meta| args.parse(&meta));
    if let Err(e) = syn::parse::Parser::parse(parser, attr) {
        // The function is kept so that its callers don't add errors of their own.
        let e = e.into_compile_error();
        let item = proc_macro2::TokenStream::from(item);
        return quote::quote!(#e #item).into();
    }
    match syn::parse::<syn::ItemFn>(item.clone()) {
        Ok(item) => expand::expand(&args, &item, default_crate).into(),
        Err(e) => {
            let e =
                syn::Error::new(e.span(), "#[tool] applies to an `async fn`").into_compile_error();
            let item = proc_macro2::TokenStream::from(item);
            quote::quote!(#e #item).into()
        }
    }
}
