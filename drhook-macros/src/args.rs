//! Arguments of `#[drhook(...)]`.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Token};

/// Parsed attribute arguments.
pub struct Args {
    /// `name = "..."`: the routine name; default `<module path>::<fn name>`.
    pub name: Option<LitStr>,
}

impl Args {
    /// Parses `name = "..."` (the only argument); anything else is an error
    /// pointing at the offending tokens.
    pub fn parse(tokens: TokenStream) -> syn::Result<Args> {
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens)?;
        let mut name = None;
        for meta in metas {
            match &meta {
                Meta::NameValue(nv) if nv.path.is_ident("name") => {
                    if name.is_some() {
                        return Err(syn::Error::new_spanned(&meta, "duplicate `name` argument"));
                    }
                    match &nv.value {
                        Expr::Lit(ExprLit {
                            lit: Lit::Str(s), ..
                        }) => {
                            if s.value().trim().is_empty() {
                                return Err(syn::Error::new_spanned(
                                    s,
                                    "the routine name must not be empty",
                                ));
                            }
                            name = Some(s.clone());
                        }
                        other => {
                            return Err(syn::Error::new_spanned(
                                other,
                                "expected a string literal: #[drhook(name = \"MODULE:ROUTINE\")]",
                            ));
                        }
                    }
                }
                _ => {
                    return Err(syn::Error::new_spanned(
                        &meta,
                        "unknown argument; #[drhook] accepts only `name = \"...\"`",
                    ));
                }
            }
        }
        Ok(Args { name })
    }
}
