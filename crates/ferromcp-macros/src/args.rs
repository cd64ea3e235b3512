//! The arguments of `#[tool(...)]`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::{LitBool, LitStr, Path};

/// The keys `#[tool(...)]` knows, as listed in the error for an unknown one.
const KNOWN_KEYS: &str = "`name`, `title`, `description`, `read_only`, `destructive`, \
                          `idempotent`, `open_world`, `app`, `crate`";

/// What `#[tool(...)]` said; everything is optional.
#[derive(Default)]
pub(crate) struct ToolArgs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: Option<LitBool>,
    pub(crate) destructive: Option<LitBool>,
    pub(crate) idempotent: Option<LitBool>,
    pub(crate) open_world: Option<LitBool>,
    /// `app = "ui://…"`: the MCP App the tool links to.
    pub(crate) app: Option<LitStr>,
    pub(crate) krate: Option<Path>,
}

impl ToolArgs {
    /// Reads one `key`, `key = "text"` or `key = true|false` item.
    pub(crate) fn parse(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error(format!("unknown `#[tool]` key; known keys: {KNOWN_KEYS}")));
        };
        match key.as_str() {
            "name" => set(meta, &key, &mut self.name, string(meta)?),
            "title" => set(meta, &key, &mut self.title, string(meta)?),
            "description" => set(meta, &key, &mut self.description, string(meta)?),
            "read_only" => set(meta, &key, &mut self.read_only, flag(meta)?),
            "destructive" => set(meta, &key, &mut self.destructive, flag(meta)?),
            "idempotent" => set(meta, &key, &mut self.idempotent, flag(meta)?),
            "open_world" => set(meta, &key, &mut self.open_world, flag(meta)?),
            "app" => set(meta, &key, &mut self.app, string(meta)?),
            "crate" => {
                let lit = string(meta)?;
                let path = lit.parse_with(Path::parse_mod_style)?;
                set(meta, &key, &mut self.krate, path)
            }
            _ => Err(meta.error(format!(
                "unknown `#[tool]` key `{key}`; known keys: {KNOWN_KEYS}"
            ))),
        }
    }

    /// Whether any annotation hint was given.
    pub(crate) fn has_hints(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }

    /// The `ToolAnnotations` setter calls for the hints given, e.g.
    /// `.with_read_only_hint(true)`.
    pub(crate) fn hint_setters(&self) -> TokenStream {
        let hints = [
            (&self.read_only, "with_read_only_hint"),
            (&self.destructive, "with_destructive_hint"),
            (&self.idempotent, "with_idempotent_hint"),
            (&self.open_world, "with_open_world_hint"),
        ];
        hints
            .into_iter()
            .filter_map(|(value, setter)| {
                let value = value.as_ref()?;
                let setter = syn::Ident::new(setter, value.span);
                Some(quote!(.#setter(#value)))
            })
            .collect()
    }
}

/// Stores a key's value, refusing a key given twice.
fn set<T>(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    slot: &mut Option<T>,
    value: T,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("`{key}` is given more than once")));
    }
    *slot = Some(value);
    Ok(())
}

/// `key = "text"`.
fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error("expected `= \"...\"` after this key"));
    }
    meta.value()?.parse()
}

/// `key` (true) or `key = true|false`.
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<LitBool> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse()
    } else {
        let span = meta
            .path
            .get_ident()
            .map_or_else(Span::call_site, syn::Ident::span);
        Ok(LitBool::new(true, span))
    }
}
