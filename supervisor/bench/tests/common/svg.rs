//! Reading back the pictures the tests write: how many rectangles of a fill colour, and
//! every text the picture carries.

/// A picture read back from its SVG text.
pub struct Svg {
    text: String,
}

impl Svg {
    /// Reads `path` and checks that it is well-formed SVG.
    pub fn read(path: &std::path::Path) -> Svg {
        let text = std::fs::read_to_string(path).unwrap();
        roxmltree::Document::parse(&text).expect("well-formed SVG");
        Svg { text }
    }

    fn doc(&self) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(&self.text).unwrap()
    }

    /// The `<rect>`s filled with `colour` (e.g. "#2CA02C").
    pub fn rects_filled(&self, colour: &str) -> usize {
        self.doc()
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(colour))
            .count()
    }

    /// The contents of every `<text>`.
    pub fn texts(&self) -> Vec<String> {
        self.doc()
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::to_string))
            .collect()
    }

    /// Panics naming the missing one unless every string of `want` is in some text.
    pub fn assert_texts(&self, want: &[&str]) {
        let texts = self.texts();
        for w in want {
            assert!(
                texts.iter().any(|t| t.contains(w)),
                "{w:?} not in {texts:?}"
            );
        }
    }
}
