//! [`PartView`]: the type-erased view of a message part.
//!
//! On the server it is Leptos's `AnyView`, its HTML between two comments (`<!--dp-->` …
//! `<!--/dp-->`). In the browser it is an erased view that is only ever built, never
//! hydrated: the hydration code an `AnyView` carries for every type it erases — twice,
//! sync and async — is dead weight, and for the parts it was about a third of the hydrate
//! bundle. Where the server rendered one (a stored conversation, rendered with the page so
//! it is there on first paint and without JavaScript), hydrating it builds the part afresh
//! and puts it in place of what lies between the comments.

/// The comments around a part's server HTML.
const START: &str = "dp";
const END: &str = "/dp";

#[cfg(any(not(feature = "hydrate"), feature = "ssr"))]
mod imp {
    use leptos::prelude::{AnyView, IntoAny};
    use leptos::tachys::{
        html::attribute::{any_attribute::AnyAttribute, Attribute},
        hydration::Cursor,
        ssr::StreamBuilder,
        view::{add_attr::AddAnyAttr, Position, PositionState, Render, RenderHtml},
    };

    use super::{END, START};

    /// A message part's view, of any type.
    pub type PartView = AnyView;

    /// Erases a view's type.
    pub trait IntoPartView {
        /// The view as a [`PartView`].
        fn into_part_view(self) -> PartView;
    }

    impl<T: RenderHtml + 'static> IntoPartView for T
    where
        T::State: 'static,
    {
        fn into_part_view(self) -> PartView {
            Marked(self).into_any()
        }
    }

    /// A view whose HTML is written between the part comments, so the browser knows what
    /// to replace with the part it builds.
    pub struct Marked<T>(T);

    impl<T: Render> Render for Marked<T> {
        type State = T::State;

        fn build(self) -> Self::State {
            self.0.build()
        }

        fn rebuild(self, state: &mut Self::State) {
            self.0.rebuild(state);
        }
    }

    impl<T: RenderHtml> AddAnyAttr for Marked<T> {
        type Output<SomeNewAttr: Attribute> = Marked<T>;

        fn add_any_attr<NewAttr: Attribute>(self, _attr: NewAttr) -> Self::Output<NewAttr> {
            self
        }
    }

    fn comment(text: &str) -> String {
        format!("<!--{text}-->")
    }

    impl<T: RenderHtml> RenderHtml for Marked<T> {
        type AsyncOutput = Marked<T::AsyncOutput>;
        type Owned = Marked<T::Owned>;

        const MIN_LENGTH: usize = T::MIN_LENGTH;

        fn dry_resolve(&mut self) {
            self.0.dry_resolve();
        }

        async fn resolve(self) -> Self::AsyncOutput {
            Marked(self.0.resolve().await)
        }

        fn html_len(&self) -> usize {
            self.0.html_len() + START.len() + END.len() + 14
        }

        fn to_html_with_buf(
            self,
            buf: &mut String,
            position: &mut Position,
            escape: bool,
            mark_branches: bool,
            extra_attrs: Vec<AnyAttribute>,
        ) {
            buf.push_str(&comment(START));
            // A comment separates what follows from a text before it.
            *position = Position::NextChild;
            self.0
                .to_html_with_buf(buf, position, escape, mark_branches, extra_attrs);
            buf.push_str(&comment(END));
            *position = Position::NextChild;
        }

        fn to_html_async_with_buf<const OUT_OF_ORDER: bool>(
            self,
            buf: &mut StreamBuilder,
            position: &mut Position,
            escape: bool,
            mark_branches: bool,
            extra_attrs: Vec<AnyAttribute>,
        ) where
            Self: Sized,
        {
            buf.push_sync(&comment(START));
            *position = Position::NextChild;
            self.0.to_html_async_with_buf::<OUT_OF_ORDER>(
                buf,
                position,
                escape,
                mark_branches,
                extra_attrs,
            );
            buf.push_sync(&comment(END));
            *position = Position::NextChild;
        }

        fn hydrate<const FROM_SERVER: bool>(
            self,
            cursor: &Cursor,
            position: &PositionState,
        ) -> Self::State {
            // Only the browser build hydrates, and there a part is the other `PartView`.
            self.0.hydrate::<FROM_SERVER>(cursor, position)
        }

        fn into_owned(self) -> Self::Owned {
            Marked(self.0.into_owned())
        }
    }
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
mod imp {
    use std::any::{Any, TypeId};

    use leptos::tachys::{
        html::attribute::any_attribute::AnyAttribute,
        hydration::Cursor,
        renderer::{types, Rndr},
        view::{Mountable, Position, PositionState, Render, RenderHtml},
    };
    use wasm_bindgen::JsCast;

    use super::{END, START};

    type Erased = Box<dyn Any + Send>;

    /// A message part's view, of any type; built in the browser only.
    pub struct PartView {
        type_id: TypeId,
        value: Erased,
        build: fn(Erased) -> PartViewState,
        rebuild: fn(Erased, &mut PartViewState),
    }

    /// Erases a view's type.
    pub trait IntoPartView {
        /// The view as a [`PartView`].
        fn into_part_view(self) -> PartView;
    }

    impl<T: RenderHtml + 'static> IntoPartView for T
    where
        T::State: 'static,
    {
        fn into_part_view(self) -> PartView {
            fn build<T: RenderHtml + 'static>(value: Erased) -> PartViewState
            where
                T::State: 'static,
            {
                // A PartView holds its own type; were it ever not, nothing is shown.
                let state: Box<dyn ErasedState> = match value.downcast::<T>() {
                    Ok(value) => Box::new(value.build()),
                    Err(_) => Box::new(().build()),
                };
                // A view that puts nothing in the page (`()`) still needs a place, so a
                // later view of another type knows where to go.
                let placeholder = (!T::EXISTS).then(Rndr::create_placeholder);
                PartViewState {
                    type_id: TypeId::of::<T>(),
                    state,
                    placeholder,
                    anchor: None,
                }
            }
            fn rebuild<T: Render + 'static>(value: Erased, state: &mut PartViewState)
            where
                T::State: 'static,
            {
                // Rebuilt only with the type it was built with (the caller compares
                // `type_id`s); anything else leaves the view as it is.
                let Ok(value) = value.downcast::<T>() else {
                    return;
                };
                if let Some(state) = state.state.as_any_mut().downcast_mut::<T::State>() {
                    value.rebuild(state);
                }
            }
            PartView {
                type_id: TypeId::of::<T>(),
                value: Box::new(self),
                build: build::<T>,
                rebuild: rebuild::<T>,
            }
        }
    }

    trait ErasedState: Mountable {
        fn as_any_mut(&mut self) -> &mut dyn Any;
    }

    impl<S: Mountable + 'static> ErasedState for S {
        fn as_any_mut(&mut self) -> &mut dyn Any {
            self
        }
    }

    /// What a built [`PartView`] keeps.
    pub struct PartViewState {
        type_id: TypeId,
        state: Box<dyn ErasedState>,
        placeholder: Option<types::Placeholder>,
        /// The server's closing comment, for a part that replaced server HTML: it stays
        /// after the part and goes with it.
        anchor: Option<types::Placeholder>,
    }

    impl Mountable for PartViewState {
        fn unmount(&mut self) {
            self.state.unmount();
            if let Some(placeholder) = &mut self.placeholder {
                placeholder.unmount();
            }
            if let Some(anchor) = &mut self.anchor {
                anchor.unmount();
            }
        }

        fn mount(&mut self, parent: &types::Element, marker: Option<&types::Node>) {
            self.state.mount(parent, marker);
            if let Some(placeholder) = &mut self.placeholder {
                placeholder.mount(parent, marker);
            }
            if let Some(anchor) = &mut self.anchor {
                anchor.mount(parent, marker);
            }
        }

        fn insert_before_this(&self, child: &mut dyn Mountable) -> bool {
            self.state.insert_before_this(child)
                || self
                    .placeholder
                    .as_ref()
                    .is_some_and(|placeholder| placeholder.insert_before_this(child))
                || self
                    .anchor
                    .as_ref()
                    .is_some_and(|anchor| anchor.insert_before_this(child))
        }

        fn elements(&self) -> Vec<types::Element> {
            self.state.elements()
        }
    }

    impl Render for PartView {
        type State = PartViewState;

        fn build(self) -> Self::State {
            (self.build)(self.value)
        }

        fn rebuild(self, state: &mut Self::State) {
            if self.type_id == state.type_id {
                (self.rebuild)(self.value, state);
                return;
            }
            // Another type: the new view takes the old one's place (and keeps the server's
            // closing comment, if any, so the place stays marked).
            let mut new = self.build();
            state.insert_before_this(&mut new);
            let anchor = state.anchor.take();
            state.unmount();
            *state = new;
            state.anchor = anchor;
        }
    }

    leptos::tachys::no_attrs!(PartView);

    fn is_comment(node: &web_sys::Node, text: &str) -> bool {
        node.node_type() == web_sys::Node::COMMENT_NODE
            && node.text_content().as_deref() == Some(text)
    }

    /// Removes the opening comment `start` and every node after it up to its closing
    /// comment (parts nest: a tool part inside a message), and returns that comment; `None`
    /// when there is none (then everything after `start` is gone too, as it was the part's).
    fn remove_until_end(
        parent: &web_sys::Element,
        start: &web_sys::Node,
    ) -> Option<types::Placeholder> {
        let mut depth = 0usize;
        let mut node = start.next_sibling();
        // Nothing can be done if the browser refuses to remove a node; the part is still
        // built and shown, only the old copy stays too.
        let _ = parent.remove_child(start);
        while let Some(current) = node {
            if is_comment(&current, END) {
                if depth == 0 {
                    return current.dyn_into::<types::Placeholder>().ok();
                }
                depth -= 1;
            } else if is_comment(&current, START) {
                depth += 1;
            }
            node = current.next_sibling();
            let _ = parent.remove_child(&current);
        }
        None
    }

    impl RenderHtml for PartView {
        type AsyncOutput = Self;
        type Owned = Self;

        const MIN_LENGTH: usize = 0;

        fn dry_resolve(&mut self) {}

        async fn resolve(self) -> Self::AsyncOutput {
            self
        }

        fn to_html_with_buf(
            self,
            _buf: &mut String,
            _position: &mut Position,
            _escape: bool,
            _mark_branches: bool,
            _extra_attrs: Vec<AnyAttribute>,
        ) {
            // The browser build renders no HTML; the server's PartView is an AnyView.
        }

        fn hydrate<const FROM_SERVER: bool>(
            self,
            cursor: &Cursor,
            position: &PositionState,
        ) -> Self::State {
            // The server wrote the part between `<!--dp-->` and `<!--/dp-->`: build the part
            // afresh, put it before the closing comment and drop what was between, so the
            // page shows the same part, now live.
            if position.get() == Position::FirstChild {
                cursor.child();
            } else {
                cursor.sibling();
            }
            position.set(Position::NextChild);
            let start = cursor.current();
            let (Some(parent), true) = (start.parent_element(), is_comment(&start, START)) else {
                leptos::logging::error!("datban: a message part's server HTML is missing");
                return self.build();
            };
            let Some(end) = remove_until_end(&parent, &start) else {
                leptos::logging::error!("datban: a message part's server HTML is cut short");
                return self.build();
            };
            let mut state = self.build();
            let end_node: &web_sys::Node = end.as_ref();
            state.state.mount(&parent, Some(end_node));
            if let Some(placeholder) = &mut state.placeholder {
                placeholder.mount(&parent, Some(end_node));
            }
            cursor.set(end_node.clone());
            state.anchor = Some(end);
            state
        }

        fn into_owned(self) -> Self::Owned {
            self
        }
    }
}

pub use imp::{IntoPartView, PartView};
