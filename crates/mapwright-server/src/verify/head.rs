//! The verification page's reader: our meta tag among the children of the `<head>`, as a
//! browser builds it. Pure (html5ever and std only): the fuzz target `verify_page` compiles
//! this very file.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use html5ever::tendril::StrTendril;
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, QualName, local_name, ns};

/// The meta tag's `name`.
pub const META_NAME: &str = "mapwright-site-verification";

/// Whether the page's head has our meta tag with `content` equal to the token (blank space
/// around it aside).
pub fn head_has_meta(html: &[u8], token: &str) -> bool {
    !token.is_empty() && head_verification_contents(html).iter().any(|c| c.trim() == token)
}

/// The `content` of every `<meta name="mapwright-site-verification">` (the name's value in
/// any case) that is a child of the document's `<head>`, as the HTML standard's tree
/// construction builds it: html5ever's tree builder, with a sink that keeps no tree, only
/// which element is the head and the attributes of `<meta>` elements until they are placed.
///
/// Text in comments, `<script>`, `<style>`, `<title>` or `<noscript>` is not markup, and a
/// `<meta>` after anything that ends the head (text, a `<p>`, `<body>`) lands in the body: all
/// ignored, which is what makes a page that shows what strangers typed no proof. Reading
/// stops when the body starts (nothing after it can be in the head), so a long page costs
/// only its head; bytes that are not UTF-8 are replaced, the token being ASCII.
pub fn head_verification_contents(html: &[u8]) -> Vec<String> {
    use html5ever::tendril::{Tendril, TendrilSink};
    let found = Rc::new(HeadSink::default());
    let mut parser = html5ever::parse_document(SharedSink(found.clone()), Default::default()).from_utf8();
    for chunk in html.chunks(8 * 1024) {
        parser.process(Tendril::from_slice(chunk));
        if found.body_started.get() {
            break;
        }
    }
    if !found.body_started.get() {
        parser.finish();
    }
    found.contents.take()
}

/// A handle of [`HeadSink`]: an index into its node names (0 is the document).
type Node = usize;

/// What [`head_verification_contents`] keeps while html5ever builds the tree.
#[derive(Default)]
struct HeadSink {
    /// The name of every node so far, by handle (`None`: the document, comments, fragments).
    names: RefCell<Vec<Option<QualName>>>,
    /// Attributes of `<meta name="mapwright-site-verification">` elements not yet placed.
    metas: RefCell<HashMap<Node, String>>,
    /// The head element, once made.
    head: Cell<Option<Node>>,
    /// A `<body>` or `<frameset>` was made: the head is complete.
    body_started: Cell<bool>,
    /// `content` of our meta tags placed in the head.
    contents: RefCell<Vec<String>>,
}

impl HeadSink {
    fn add(&self, name: Option<QualName>) -> Node {
        let mut names = self.names.borrow_mut();
        if names.is_empty() {
            names.push(None); // the document
        }
        names.push(name);
        names.len() - 1
    }
}

/// The sink given to html5ever (which takes it by value) sharing the state read afterwards.
struct SharedSink(Rc<HeadSink>);

/// The name of an element handle: html5ever asks only for elements it made.
#[derive(Debug)]
struct Name(QualName);

impl html5ever::tree_builder::ElemName for Name {
    fn ns(&self) -> &html5ever::Namespace {
        &self.0.ns
    }
    fn local_name(&self) -> &html5ever::LocalName {
        &self.0.local
    }
}

impl TreeSink for SharedSink {
    type Handle = Node;
    type Output = ();
    type ElemName<'a> = Name;

    fn finish(self) {}
    fn parse_error(&self, _msg: Cow<'static, str>) {}
    fn get_document(&self) -> Node {
        0
    }
    fn elem_name<'a>(&'a self, target: &'a Node) -> Name {
        let names = self.0.names.borrow();
        // The tree builder asks only about elements; anything else reads as an unknown one.
        let name = names.get(*target).cloned().flatten();
        Name(name.unwrap_or_else(|| QualName::new(None, ns!(html), local_name!(""))))
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Node {
        let html = name.ns == ns!(html);
        let (is_head, is_body, is_meta) = (
            html && name.local == local_name!("head"),
            html && matches!(name.local, local_name!("body") | local_name!("frameset")),
            html && name.local == local_name!("meta"),
        );
        let id = self.0.add(Some(name));
        if flags.template {
            // Its contents, a document fragment, are the next handle.
            self.0.add(None);
        }
        if is_head && self.0.head.get().is_none() {
            self.0.head.set(Some(id));
        }
        if is_body {
            self.0.body_started.set(true);
        }
        if is_meta {
            let attr = |n: &str| attrs.iter().find(|a| a.name.ns == ns!() && &*a.name.local == n);
            if attr("name").is_some_and(|a| a.value.trim().eq_ignore_ascii_case(META_NAME)) {
                let content = attr("content").map(|a| a.value.to_string()).unwrap_or_default();
                self.0.metas.borrow_mut().insert(id, content);
            }
        }
        id
    }
    fn create_comment(&self, _text: StrTendril) -> Node {
        self.0.add(None)
    }
    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> Node {
        self.0.add(None)
    }
    fn append(&self, parent: &Node, child: NodeOrText<Node>) {
        if let NodeOrText::AppendNode(child) = child {
            let meta = self.0.metas.borrow_mut().remove(&child);
            if let Some(content) = meta.filter(|_| self.0.head.get() == Some(*parent)) {
                self.0.contents.borrow_mut().push(content);
            }
        }
    }
    fn append_based_on_parent_node(&self, _element: &Node, _prev: &Node, child: NodeOrText<Node>) {
        // Foster parenting (misplaced table content): never in the head.
        self.drop_meta(child);
    }
    fn append_doctype_to_document(&self, _name: StrTendril, _public: StrTendril, _system: StrTendril) {}
    fn get_template_contents(&self, target: &Node) -> Node {
        target + 1
    }
    fn same_node(&self, x: &Node, y: &Node) -> bool {
        x == y
    }
    fn set_quirks_mode(&self, _mode: QuirksMode) {}
    fn append_before_sibling(&self, _sibling: &Node, child: NodeOrText<Node>) {
        // Also foster parenting only.
        self.drop_meta(child);
    }
    fn add_attrs_if_missing(&self, _target: &Node, _attrs: Vec<Attribute>) {}
    fn remove_from_parent(&self, _target: &Node) {}
    fn reparent_children(&self, _node: &Node, _new_parent: &Node) {}
}

impl SharedSink {
    fn drop_meta(&self, child: NodeOrText<Node>) {
        if let NodeOrText::AppendNode(child) = child {
            self.0.metas.borrow_mut().remove(&child);
        }
    }
}
