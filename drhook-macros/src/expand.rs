//! Rewriting the instrumented function.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Ident, Item, ItemFn, ReturnType, TraitItemFn, Type};

use crate::args::Args;

/// Wraps the body of the function in `item` with a Dr.Hook guard.
pub fn expand(args: &Args, item: TokenStream) -> syn::Result<TokenStream> {
    let mut f: ItemFn = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(f) => f,
        Err(_) => return Err(unsupported(item)),
    };
    let sig = &f.sig;
    if let Some(c) = &sig.constness {
        return Err(syn::Error::new(
            c.span(),
            "#[drhook] cannot instrument a `const fn`: entering a region is a run-time operation",
        ));
    }
    let ident = &sig.ident;
    let name = match &args.name {
        Some(lit) => quote!(#lit),
        None => {
            let fn_name = ident.to_string();
            let fn_name = fn_name.strip_prefix("r#").unwrap_or(&fn_name);
            quote!(::core::concat!(::core::module_path!(), "::", #fn_name))
        }
    };
    // Mixed-site hygiene: the user's code cannot name (or clash with) these.
    let guard = Ident::new("__drhook_guard", Span::mixed_site());
    let site = Ident::new("__DRHOOK_SITE", Span::mixed_site());
    let line = quote_spanned!(ident.span()=> ::core::line!());
    let body = &f.block;
    let site_ref = quote! {{
        static #site: ::drhook::__private::Site =
            ::drhook::__private::Site::new(#name, ::core::file!(), #line);
        ::drhook::__private::inventory::submit! { ::drhook::__private::SiteRef(&#site) }
        &#site
    }};
    let new_body = if sig.asyncness.is_some() {
        // Every poll of the body is an activation (see drhook::instrumented).
        // The unreachable early return gives the inner `async` block the
        // function's return type, so `?` and `return` infer as they would
        // in the function itself (as tracing-attributes does).
        let fake_return = match &sig.output {
            ReturnType::Type(_, ty) if !contains_impl_trait(ty) => quote! {
                #[allow(unreachable_code, clippy::diverging_sub_expression)]
                if false {
                    let __drhook_fake_return: #ty = loop {};
                    return __drhook_fake_return;
                }
            },
            ReturnType::Type(..) => quote!(),
            ReturnType::Default => quote! {
                #[allow(unreachable_code)]
                if false {
                    return;
                }
            },
        };
        quote! {{
            ::drhook::__private::Instrumented::new(#site_ref, async move {
                #fake_return
                #body
            })
            .await
        }}
    } else {
        quote! {{
            let #guard = ::drhook::__private::Guard::enter(#site_ref);
            #body
        }}
    };
    *f.block = syn::parse2(new_body)?;
    Ok(quote!(#f))
}

/// Whether `ty` mentions `impl Trait` anywhere (such a type cannot be
/// written in a `let`).
fn contains_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut f = Finder(false);
    f.visit_type(ty);
    f.0
}

/// A precise error for an item that is not an instrumentable function.
fn unsupported(item: TokenStream) -> syn::Error {
    if let Ok(t) = syn::parse2::<TraitItemFn>(item.clone())
        && t.default.is_none()
    {
        return syn::Error::new(
            t.sig.ident.span(),
            "#[drhook] needs a function body; put it on the implementations of this trait method",
        );
    }
    let what = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(_)) => "a struct",
        Ok(Item::Enum(_)) => "an enum",
        Ok(Item::Impl(_)) => "an impl block (put it on the methods)",
        Ok(Item::Trait(_)) => "a trait (put it on the methods)",
        Ok(Item::Mod(_)) => "a module",
        Ok(Item::Static(_)) | Ok(Item::Const(_)) => "a static or const",
        Ok(Item::ForeignMod(_)) | Ok(Item::Fn(_)) => "this item",
        _ => "this item",
    };
    syn::Error::new(
        item.span(),
        format!(
            "#[drhook] can only be applied to functions and methods with a body, not to {what}"
        ),
    )
}
