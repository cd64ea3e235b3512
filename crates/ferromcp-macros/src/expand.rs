//! `#[tool]`: checks the function and writes its companion `<name>_tool()`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::{Attribute, Expr, ExprLit, FnArg, ItemFn, Lit, LitStr, Meta, Type};

use crate::args::ToolArgs;

/// The function as written, followed by its companion (or by the errors that stop it);
/// `default_crate` is the server's path when `crate = "…"` is not given.
pub(crate) fn expand(args: &ToolArgs, item: &ItemFn, default_crate: &TokenStream) -> TokenStream {
    match companion(args, item, default_crate) {
        Ok(companion) => quote!(#item #companion),
        Err(e) => {
            let e = e.into_compile_error();
            quote!(#item #e)
        }
    }
}

/// Checks the signature: what `ToolHandler` would refuse for a reason the macro can name
/// better than the trait error can.
fn check(item: &ItemFn) -> syn::Result<()> {
    let sig = &item.sig;
    let mut errors: Vec<syn::Error> = Vec::new();
    if let Some(receiver) = sig.receiver() {
        errors.push(syn::Error::new_spanned(
            receiver,
            "#[tool] works on free functions, not methods: make this a free `async fn` and take \
             shared state with the `State<T>` extractor (registered with \
             `McpServerBuilder::state`), or register a closure that captures it with \
             `McpServerBuilder::tool`",
        ));
    }
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            "#[tool] functions must be `async`: write `async fn`",
        ));
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.push(syn::Error::new(
            token.span,
            "#[tool] functions can't be `unsafe`",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "#[tool] functions can't have an `extern` ABI",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "#[tool] functions can't be generic: a tool has one input schema and one output \
             type; write a non-generic wrapper per instantiation",
        ));
    }
    for arg in &sig.inputs {
        let FnArg::Typed(pat) = arg else { continue };
        if let Type::ImplTrait(ty) = &*pat.ty {
            errors.push(syn::Error::new_spanned(
                ty,
                "#[tool] functions can't take `impl Trait` arguments (that makes them generic); \
                 name the extractor type",
            ));
        }
    }
    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            first.extend(errors);
            Err(first)
        }
    }
}

/// `fn <name>_tool() -> ToolDef`, after [`check`].
fn companion(
    args: &ToolArgs,
    item: &ItemFn,
    default_crate: &TokenStream,
) -> syn::Result<TokenStream> {
    check(item)?;
    let fn_ident = &item.sig.ident;
    let bare = fn_ident.unraw();
    let companion = format_ident!("{}_tool", bare, span = fn_ident.span());
    let vis = &item.vis;
    let krate = match &args.krate {
        Some(path) => quote!(#path),
        None => default_crate.clone(),
    };

    let name = match &args.name {
        Some(lit) if lit.value().is_empty() => {
            return Err(syn::Error::new(lit.span(), "a tool's name can't be empty"));
        }
        Some(lit) => lit.clone(),
        None => LitStr::new(&bare.to_string(), fn_ident.span()),
    };
    let mut spec = quote!(#krate::mcp_server::ToolSpec::new(#name));
    if let Some(title) = &args.title {
        spec.extend(quote!(.title(#title)));
    }
    if let Some(app) = &args.app {
        spec.extend(quote!(.app(#app)));
    }
    let description = match &args.description {
        Some(lit) => Some(quote!(#lit)),
        None => doc_description(&item.attrs),
    };
    if let Some(description) = description {
        spec.extend(quote!(.description(#description)));
    }
    if args.has_hints() {
        // `ToolAnnotations` lives in `ferromcp_types`, which the user's crate need not depend
        // on: its type is taken from `ToolSpec::annotations`'s parameter instead of named.
        // The helper is scoped to its block, so that it can't shadow a tool fn of that name.
        let setters = args.hint_setters();
        spec.extend(quote! {
            .annotations({
                fn annotations<S, A: ::core::default::Default, R>(_: fn(S, A) -> R) -> A {
                    A::default()
                }
                annotations(#krate::mcp_server::ToolSpec::annotations) #setters
            })
        });
    }

    // The handler is named with the function's own span, so that a handler the server
    // refuses (an argument that is not an extractor, a return type that is not a tool
    // result, a future that is not `Send`) is reported on the function's name with
    // `ToolHandler`'s message. (Checking each argument against `FromHandlerCall` would point at
    // the argument, but rustc then lists every extractor type in the error, a list that
    // changes whenever the server gains one; the function's name and the trait's note are
    // enough to find the culprit.)
    let handler = quote_spanned!(fn_ident.span()=> #fn_ident);
    let tool_def = quote_spanned!(fn_ident.span()=> #krate::mcp_server::ToolDef::new);
    // A raw identifier (`r#type`) is not linked: rustdoc's links take no `r#`.
    let target = if fn_ident.to_string().starts_with("r#") {
        format!("`{bare}`")
    } else {
        format!("[`{bare}`]")
    };
    let doc = format!(
        " The MCP tool `{name}` served by {target}, made by `#[tool]`: register it with \
         `McpServerBuilder::tool_def({companion}())`.",
        name = name.value(),
    );
    // The companion exists exactly when the function does.
    let cfgs = item.attrs.iter().filter(|a| a.path().is_ident("cfg"));
    Ok(quote! {
        #(#cfgs)*
        #[doc = #doc]
        #[must_use]
        #vis fn #companion() -> #krate::mcp_server::ToolDef {
            #tool_def(#spec, #handler)
        }
    })
}

/// The description from the doc comment: its lines joined with `\n`, the common indentation
/// removed, blank lines at both ends dropped. A doc attribute that is not a string literal
/// (`#[doc = include_str!("…")]`) makes the whole description a `concat!` of the pieces,
/// one per line.
fn doc_description(attrs: &[Attribute]) -> Option<TokenStream> {
    let docs: Vec<&Expr> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => Some(&nv.value),
            _ => None,
        })
        .collect();
    if docs.is_empty() {
        return None;
    }
    let literals: Option<Vec<String>> = docs
        .iter()
        .map(|expr| match expr {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.value()),
            _ => None,
        })
        .collect();
    match literals {
        Some(lines) => {
            let text = unindent(&lines);
            (!text.is_empty()).then(|| quote!(#text))
        }
        // No unindenting here (the text is only known to the compiler): the pieces, one per
        // line, trimmed at both ends.
        None => {
            let mut pieces = TokenStream::new();
            for (i, doc) in docs.iter().enumerate() {
                if i > 0 {
                    pieces.extend(quote!("\n",));
                }
                pieces.extend(quote!(#doc,));
            }
            Some(quote!(::core::concat!(#pieces).trim()))
        }
    }
}

/// Joins doc lines (each may hold several, from a block comment), removes their common
/// leading whitespace and trims the result.
fn unindent(pieces: &[String]) -> String {
    let lines: Vec<&str> = pieces.iter().flat_map(|p| p.split('\n')).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let joined: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()).trim_end())
        .collect();
    joined.join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::unindent;

    #[test]
    fn doc_lines_are_unindented_and_trimmed() {
        let lines = [
            " Adds two numbers.",
            "",
            " Returns their sum.",
            "   indented",
        ];
        let lines = lines.map(String::from);
        assert_eq!(
            unindent(&lines),
            "Adds two numbers.\n\nReturns their sum.\n  indented"
        );
        let block = ["\n    Block comment.\n      more\n    ".to_owned()];
        assert_eq!(unindent(&block), "Block comment.\n  more");
        assert_eq!(unindent(&[" ".to_owned()]), "");
    }
}
