//! RFC 6570 URI templates, levels 1–3 (issue "High-level server", point 3): expansion against
//! the RFC's examples, the linear matcher used by `resources/read`, and its bounds.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ferromcp_server::uri_template::{
    DEFAULT_MAX_URI_LEN, MAX_TEMPLATE_LEN, TemplateError, UriTemplate,
};

/// The variables of RFC 6570 §3.2 (string-valued ones; lists and maps are level 4).
fn rfc_vars() -> HashMap<&'static str, &'static str> {
    HashMap::from([
        ("dub", "me/too"),
        ("hello", "Hello World!"),
        ("half", "50%"),
        ("var", "value"),
        ("who", "fred"),
        ("base", "http://example.com/home/"),
        ("path", "/foo/bar"),
        ("v", "6"),
        ("x", "1024"),
        ("y", "768"),
        ("empty", ""),
        ("accent", "é"),
    ])
}

/// Expansion cases from RFC 6570 §1.2 (levels 1–3) and §3.2.2–§3.2.9.
const EXPANSIONS: &[(&str, &str)] = &[
    // Level 1: simple string expansion.
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{accent}", "%C3%A9"),
    ("{dub}", "me%2Ftoo"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    // Level 2: reserved expansion.
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    // Level 2: fragment expansion.
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    // Level 3: multiple variables.
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    // Level 3: label expansion.
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    // Level 3: path segments.
    ("{/var}", "/value"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    // Level 3: path-style parameters.
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    // Level 3: form-style query and continuation.
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    // Nothing defined: no prefix at all.
    ("/a{?undef,other}", "/a"),
    ("/a{/undef}{;undef}{.undef}", "/a"),
];

#[test]
fn expansion_follows_rfc_6570_examples() {
    let vars = rfc_vars();
    let mut failures = Vec::new();
    for &(template, expected) in EXPANSIONS {
        let t = UriTemplate::parse(template).unwrap();
        let got = t.expand(&vars);
        if got != expected {
            failures.push(format!("{template}: got {got:?}, expected {expected:?}"));
        }
        // expand_with sees the same values.
        assert_eq!(t.expand_with(|n| vars.get(n).copied()), got);
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn reserved_expansion_keeps_percent_triplets() {
    let t = UriTemplate::parse("{+v}/{v}").unwrap();
    assert_eq!(t.expand(&[("v", "a%2Fb%zz")]), "a%2Fb%25zz/a%252Fb%25zz");
}

fn caps(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
    UriTemplate::parse(t)
        .unwrap()
        .matches(uri)
        .map(|c| c.into_vec())
}

fn pairs(p: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
    Some(
        p.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

#[test]
fn matches_simple_expressions() {
    let t = "test://template/{id}/data";
    assert_eq!(caps(t, "test://template/123/data"), pairs(&[("id", "123")]));
    // Simple values never contain reserved characters unencoded.
    assert_eq!(caps(t, "test://template/1/2/data"), None);
    assert_eq!(caps(t, "test://template/a:b/data"), None);
    assert_eq!(caps(t, "test://template/a?b/data"), None);
    // At least one character.
    assert_eq!(caps(t, "test://template//data"), None);
    // Literal mismatches.
    assert_eq!(caps(t, "test://other/123/data"), None);
    assert_eq!(caps(t, "test://template/123/dat"), None);
    assert_eq!(caps(t, "test://template/123/data/"), None);
    assert_eq!(caps(t, "test://template/123"), None);
    assert_eq!(caps(t, ""), None);

    assert_eq!(
        caps("x{a}x{b}x", "xAAxBBx"),
        pairs(&[("a", "AA"), ("b", "BB")])
    );
    assert_eq!(
        caps("{x,y}", "1024,768"),
        pairs(&[("x", "1024"), ("y", "768")])
    );
    assert_eq!(caps("{x,y}", "1024"), pairs(&[("x", "1024")]));
    assert_eq!(caps("{x,y}", "1,2,3"), None);
    // An inner literal anchors at its first occurrence: no backtracking, so `.` (which simple
    // values may contain) splits at the first dot.
    assert_eq!(
        caps("n:{a}.{b}", "n:x.y.z"),
        pairs(&[("a", "x"), ("b", "y.z")])
    );
    // A literal template matches only itself.
    let lit = UriTemplate::parse("test://static").unwrap();
    assert!(lit.is_literal());
    assert!(lit.matches("test://static").unwrap().is_empty());
    assert!(lit.matches("test://static2").is_none());
}

#[test]
fn matches_reserved_expressions() {
    let t = "file:///{+path}";
    assert_eq!(
        caps(t, "file:///home/user/notes.txt"),
        pairs(&[("path", "home/user/notes.txt")])
    );
    assert_eq!(caps(t, "file:///a?b#c"), pairs(&[("path", "a?b#c")]));
    assert_eq!(caps(t, "file:///"), None);
    assert_eq!(caps(t, "file://x"), None);
    // A final literal anchors at the end; an inner one at its first occurrence.
    assert_eq!(
        caps("file:///{+path}/meta", "file:///a/meta/b/meta"),
        pairs(&[("path", "a/meta/b")])
    );
    assert_eq!(
        caps("repo://{+dir}/-/{name}", "repo://a/b/-/c"),
        pairs(&[("dir", "a/b"), ("name", "c")])
    );
    // A following query expression splits off the query.
    assert_eq!(
        caps("file:///{+path}{?rev}", "file:///a/b?rev=3"),
        pairs(&[("path", "a/b"), ("rev", "3")])
    );
    assert_eq!(
        caps("{+x,y}", "a/b,c/d"),
        pairs(&[("x", "a/b"), ("y", "c/d")])
    );
}

#[test]
fn matches_fragment_and_label_expressions() {
    let t = "http://x/page{#section}";
    assert_eq!(
        caps(t, "http://x/page#intro/part"),
        pairs(&[("section", "intro/part")])
    );
    assert_eq!(caps(t, "http://x/page"), pairs(&[]));
    assert_eq!(caps(t, "http://x/page#"), pairs(&[("section", "")]));
    assert_eq!(caps(t, "http://x/pageX"), None);

    let t = "/files/{name}{.ext}";
    assert_eq!(
        caps(t, "/files/report.pdf"),
        pairs(&[("name", "report"), ("ext", "pdf")])
    );
    assert_eq!(caps(t, "/files/report"), pairs(&[("name", "report")]));
    assert_eq!(
        caps("X{.x,y}", "X.1024.768"),
        pairs(&[("x", "1024"), ("y", "768")])
    );
    assert_eq!(caps("X{.x}", "X.a/b"), None);
}

#[test]
fn matches_path_segments() {
    let t = "/repos{/owner,repo}";
    assert_eq!(
        caps(t, "/repos/octo/hello"),
        pairs(&[("owner", "octo"), ("repo", "hello")])
    );
    assert_eq!(caps(t, "/repos/octo"), pairs(&[("owner", "octo")]));
    assert_eq!(caps(t, "/repos"), pairs(&[]));
    assert_eq!(caps(t, "/repos/a/b/c"), None);
    assert_eq!(caps("{/a}{/b}", "/x/y"), pairs(&[("a", "x"), ("b", "y")]));
    assert_eq!(
        caps("{/var,x}/here", "/value/1024/here"),
        pairs(&[("var", "value"), ("x", "1024")])
    );
}

#[test]
fn matches_path_style_parameters() {
    let t = "/map{;x,y,empty}";
    assert_eq!(
        caps(t, "/map;x=1024;y=768;empty"),
        pairs(&[("x", "1024"), ("y", "768"), ("empty", "")])
    );
    // Any order, missing ones allowed, unknown or repeated ones are no match.
    assert_eq!(
        caps(t, "/map;y=768;x=1024"),
        pairs(&[("x", "1024"), ("y", "768")])
    );
    assert_eq!(caps(t, "/map;z=1"), None);
    assert_eq!(caps(t, "/map;x=1;x=2"), None);
    assert_eq!(caps(t, "/map;x=a=b"), None);
}

#[test]
fn matches_query_parameters() {
    let t = "/search{?q,lang}";
    assert_eq!(
        caps(t, "/search?lang=en&q=rust"),
        pairs(&[("q", "rust"), ("lang", "en")])
    );
    assert_eq!(caps(t, "/search?q=rust"), pairs(&[("q", "rust")]));
    assert_eq!(caps(t, "/search?q="), pairs(&[("q", "")]));
    assert_eq!(caps(t, "/search?q"), pairs(&[("q", "")]));
    assert_eq!(caps(t, "/search"), pairs(&[]));
    assert_eq!(caps(t, "/search?q=1&q=2"), None);
    assert_eq!(caps(t, "/search?other=1"), None);
    assert_eq!(caps(t, "/search?q=a?b"), None);
    assert_eq!(caps(t, "/searchq=1"), None);

    assert_eq!(
        caps("/s?fixed=yes{&x,y}", "/s?fixed=yes&y=2&x=1"),
        pairs(&[("x", "1"), ("y", "2")])
    );
    assert_eq!(
        caps("/s{?a}{&b}", "/s?a=1&b=2"),
        pairs(&[("a", "1"), ("b", "2")])
    );
    assert_eq!(
        caps("test://items/{id}{?fields}", "test://items/7?fields=a%2Cb"),
        pairs(&[("id", "7"), ("fields", "a,b")])
    );
}

#[test]
fn values_are_percent_decoded() {
    let t = "/u/{name}";
    assert_eq!(
        caps(t, "/u/J%C3%BCrgen%20X"),
        pairs(&[("name", "Jürgen X")])
    );
    assert_eq!(caps(t, "/u/Jürgen"), pairs(&[("name", "Jürgen")]));
    assert_eq!(caps(t, "/u/%c3%bc"), pairs(&[("name", "ü")]));
    // Invalid UTF-8 and invalid escapes are no match.
    assert_eq!(caps(t, "/u/%FF"), None);
    assert_eq!(caps(t, "/u/%C3"), None);
    assert_eq!(caps(t, "/u/%G1"), None);
    assert_eq!(caps(t, "/u/ab%4"), None);
    assert_eq!(
        caps("file:///{+path}", "file:///a%2Fb"),
        pairs(&[("path", "a/b")])
    );
    assert_eq!(caps("/q{?v}", "/q?v=%26%3D"), pairs(&[("v", "&=")]));
}

#[test]
fn repeated_variables_must_agree() {
    assert_eq!(caps("/{a}/{a}", "/x/x"), pairs(&[("a", "x")]));
    assert_eq!(caps("/{a}/{a}", "/x/y"), None);
    // Defined at one occurrence and undefined at the other: no assignment expands to that
    // (a fuzzing finding, `fuzz/corpus/uri_template/regression_repeated_var_defined_once`).
    assert_eq!(caps("{/a}{x}{/a}", "x/a"), None);
    assert_eq!(caps("{/a}{.x}{/a}", ".x/a"), None);
    assert_eq!(
        caps("{/a}{.x}{/a}", "/a.x/a"),
        pairs(&[("a", "a"), ("x", "x")])
    );
    assert_eq!(caps("{/a}{.x}{/a}", ".x"), pairs(&[("x", "x")]));
    assert_eq!(caps("{?a}/{;a}", "?a=1/;a=1"), pairs(&[("a", "1")]));
    assert_eq!(caps("{?a}/{;a}", "/;a=1"), None);
}

#[test]
fn expand_then_match_round_trips() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("test://template/{id}/data", &[("id", "a b/c?d")]),
        ("file:///{+path}", &[("path", "dir/file name.txt")]),
        (
            "/repos{/owner,repo}{?tab,q}",
            &[("owner", "ö"), ("repo", "x.y"), ("q", "a&b=c")],
        ),
        (
            "/map{;x,y}{#frag}",
            &[("x", "1"), ("y", ""), ("frag", "top")],
        ),
        ("X{.a,b}", &[("a", "one"), ("b", "two")]),
    ];
    for &(template, vars) in cases {
        let t = UriTemplate::parse(template).unwrap();
        let uri = t.expand(vars);
        let got = t
            .matches(&uri)
            .unwrap_or_else(|| panic!("{template} vs {uri}"));
        assert_eq!(got.len(), vars.len(), "{template} vs {uri}");
        for (k, v) in vars {
            assert_eq!(got.get(k), Some(*v), "{template} vs {uri}");
        }
        assert_eq!(t.expand(&got), uri);
    }
}

#[test]
fn variables_and_display_round_trip() {
    let src = "test://{a}/x{/b,a}{?c,b}{&d}";
    let t = UriTemplate::parse(src).unwrap();
    assert_eq!(t.variables(), ["a", "b", "c", "d"]);
    assert_eq!(t.to_string(), src);
    assert_eq!(t.as_str(), src);
    assert_eq!(src.parse::<UriTemplate>().unwrap(), t);
    assert_eq!(UriTemplate::parse(&t.to_string()).unwrap(), t);
    assert!(!t.is_literal());
    assert_eq!(
        UriTemplate::parse("a%20b{c.d}").unwrap().variables(),
        ["c.d"]
    );
}

#[test]
fn parse_errors() {
    type Check = fn(&TemplateError) -> bool;
    let cases: &[(&str, Check)] = &[
        ("{", |e| {
            matches!(e, TemplateError::UnclosedExpression { at: 0 })
        }),
        ("a{b{c}", |e| {
            matches!(e, TemplateError::UnclosedExpression { at: 1 })
        }),
        ("a}", |e| {
            matches!(e, TemplateError::UnmatchedClose { at: 1 })
        }),
        ("{}", |e| {
            matches!(e, TemplateError::EmptyExpression { at: 0 })
        }),
        ("{=x}", |e| {
            matches!(e, TemplateError::ReservedOperator { op: '=', .. })
        }),
        ("{!x}", |e| {
            matches!(e, TemplateError::ReservedOperator { op: '!', .. })
        }),
        ("{|x}", |e| {
            matches!(e, TemplateError::ReservedOperator { op: '|', .. })
        }),
        ("{x:3}", |e| {
            matches!(e, TemplateError::UnsupportedModifier { modifier: ':', .. })
        }),
        ("{/id*}", |e| {
            matches!(e, TemplateError::UnsupportedModifier { modifier: '*', .. })
        }),
        ("{?tags*}", |e| {
            matches!(e, TemplateError::UnsupportedModifier { modifier: '*', .. })
        }),
        ("{a b}", |e| {
            matches!(e, TemplateError::InvalidVariableName { .. })
        }),
        ("{x,}", |e| {
            matches!(e, TemplateError::InvalidVariableName { .. })
        }),
        ("{+}", |e| {
            matches!(e, TemplateError::InvalidVariableName { .. })
        }),
        ("{.a}{a..b}", |e| {
            matches!(e, TemplateError::InvalidVariableName { .. })
        }),
        ("{%zz}", |e| {
            matches!(e, TemplateError::InvalidVariableName { .. })
        }),
        ("a b", |e| {
            matches!(e, TemplateError::InvalidLiteral { ch: ' ', at: 1 })
        }),
        ("a<b", |e| {
            matches!(e, TemplateError::InvalidLiteral { ch: '<', .. })
        }),
        ("a%zz", |e| {
            matches!(e, TemplateError::InvalidPercentEncoding { at: 1 })
        }),
        ("a%2", |e| {
            matches!(e, TemplateError::InvalidPercentEncoding { at: 1 })
        }),
    ];
    for &(template, check) in cases {
        let err = UriTemplate::parse(template).unwrap_err();
        assert!(check(&err), "{template}: {err:?}");
        assert!(!err.to_string().is_empty());
    }
    let err = UriTemplate::parse("{x*}").unwrap_err();
    assert!(err.to_string().contains("levels 1-3"), "{err}");
}

#[test]
fn length_bounds() {
    let long = "a".repeat(MAX_TEMPLATE_LEN + 1);
    assert!(matches!(
        UriTemplate::parse(&long),
        Err(TemplateError::TooLong { .. })
    ));
    assert!(UriTemplate::parse(&long[1..]).is_ok());

    let t = UriTemplate::parse("file:///{+path}").unwrap();
    assert_eq!(t.max_uri_len(), DEFAULT_MAX_URI_LEN);
    let at_cap = format!("file:///{}", "a".repeat(DEFAULT_MAX_URI_LEN - 8));
    assert!(t.matches(&at_cap).is_some());
    let over = format!("{at_cap}a");
    assert!(t.matches(&over).is_none());
    let t = t.with_max_uri_len(DEFAULT_MAX_URI_LEN * 2);
    assert!(t.matches(&over).is_some());
}

/// A literal after an expression never starts inside the value's percent escape: `{a}D`
/// reads `%7DD` as `}` then `D`, so every expansion matches back (found by the `uri_template`
/// fuzz target; its input is `fuzz/corpus/uri_template/regression_literal_inside_percent_escape`).
#[test]
fn literal_after_an_expression_skips_percent_escapes() {
    assert_eq!(caps("x{a}D", "x%7DD"), pairs(&[("a", "}")]));
    assert_eq!(caps("x{a}7D", "x%7D7D"), pairs(&[("a", "}")]));
    assert_eq!(
        caps("{+a}D{b}", "%7Db%2DDc"),
        pairs(&[("a", "}b-"), ("b", "c")])
    );
    let t = UriTemplate::parse("x{a}D{b}y").unwrap();
    // (A value that contains the literal itself is ambiguous by the first-occurrence rule.)
    for value in ["}", "{a}", "%", "a}b}", "é}"] {
        let uri = t.expand_with(|n| (n == "a" || n == "b").then_some(value));
        let got = t
            .matches(&uri)
            .unwrap_or_else(|| panic!("{uri} does not match back"));
        assert_eq!(got.get("a"), Some(value), "{uri}");
    }
}

/// Matching is linear: adversarial URIs against many-variable templates finish fast. The bound
/// is generous; it guards against exponential or quadratic blow-up, it is not a benchmark.
#[test]
fn adversarial_inputs_finish_quickly() {
    const N: usize = 100_000;
    let many = |sep: &str, op: &str| {
        let mut s = String::new();
        for i in 0..60 {
            s.push_str(sep);
            s.push_str(&format!("{{{op}v{i}}}"));
        }
        s.push_str(sep);
        UriTemplate::parse(&s).unwrap().with_max_uri_len(N + 10)
    };
    let cases = [
        (many("x", ""), "x".repeat(N)),
        (many("x", ""), format!("x{}", "a".repeat(N))),
        (many("x", "+"), "x".repeat(N)),
        (many("x", "+"), format!("{}y", "xa".repeat(N / 2))),
        (many("", ""), "a".repeat(N)),
        (many("", "/"), "/a".repeat(N / 2)),
        (many("", "?"), format!("?{}", "v0=1&".repeat(N / 5))),
        (many("/", ""), format!("{}!", "/a".repeat(N / 2))),
    ];
    for (t, uri) in &cases {
        let start = Instant::now();
        let _ = t.matches(uri);
        let took = start.elapsed();
        assert!(
            took < Duration::from_secs(1),
            "{} took {took:?}",
            &t.as_str()[..20]
        );
    }
    // A long URI that does match.
    let t = UriTemplate::parse("/{a}/{+b}/end")
        .unwrap()
        .with_max_uri_len(3 * N);
    let uri = format!("/{}/{}/end", "a".repeat(N), "b/".repeat(N / 2));
    let start = Instant::now();
    let got = t.matches(&uri).unwrap();
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(got.get("a").unwrap().len(), N);
}

/// A tiny deterministic generator, so the randomised tests below need no extra crate.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below
    }

    fn string(&mut self, alphabet: &[char], max: usize) -> String {
        let len = self.next(max + 1);
        (0..len)
            .map(|_| alphabet[self.next(alphabet.len())])
            .collect()
    }
}

/// Expanding random values and matching the result gives the values back, for templates whose
/// expansion is unambiguous.
#[test]
fn random_values_round_trip() {
    let any: Vec<char> = "aZ09-._~:/?#[]@!$&'()*+,;= %\"<>é😀".chars().collect();
    let no_pct: Vec<char> = any.iter().copied().filter(|&c| c != '%').collect();
    let mut rng = Lcg(7);
    let cases: &[(&str, &[&str], &[char], bool)] = &[
        ("test://template/{id}/data", &["id"], &any, true),
        ("/r{/a,b}{?x,y}{#f}", &["a", "b", "x", "y"], &any, false),
        ("/m{;p,q}", &["p", "q"], &any, false),
        ("file:///{+path}", &["path"], &no_pct, true),
        ("n:{a}:{b}", &["a", "b"], &any, true),
    ];
    for &(template, names, alphabet, non_empty) in cases {
        let t = UriTemplate::parse(template).unwrap();
        for _ in 0..300 {
            let vars: Vec<(&str, String)> = names
                .iter()
                .map(|&n| {
                    let mut v = rng.string(alphabet, 12);
                    if non_empty && v.is_empty() {
                        v.push('k');
                    }
                    (n, v)
                })
                .collect();
            let uri = t.expand(&vars);
            let got = t
                .matches(&uri)
                .unwrap_or_else(|| panic!("{template}: {vars:?} -> {uri}"));
            for (n, v) in &vars {
                assert_eq!(got.get(n), Some(v.as_str()), "{template}: {uri}");
            }
        }
    }
}

/// Random URIs never panic the matcher, whatever they contain.
#[test]
fn random_uris_never_panic() {
    let alphabet: Vec<char> = "ab/?#&=;.,%2Fé😀{}:+x".chars().collect();
    let templates = [
        "test://template/{id}/data",
        "file:///{+path}",
        "x{a}x{b}x{c}x",
        "{a}{b}{+c}{#d}",
        "/r{/a,b}{?x,y}{&z}{#f}",
        "{.a,b}{;c}x{d,e}",
    ];
    let mut rng = Lcg(42);
    for template in templates {
        let t = UriTemplate::parse(template).unwrap();
        for _ in 0..2000 {
            let uri = rng.string(&alphabet, 24);
            if let Some(caps) = t.matches(&uri) {
                // Whatever matched re-expands into something that matches again.
                assert!(t.matches(&t.expand(&caps)).is_some(), "{template}: {uri}");
            }
        }
    }
}
