//! Tests of `expr.rs` (a file of their own, so that file stays readable).

use super::*;
use proptest::prelude::*;

/// Renders an expression as an s-expression.
fn sexp(e: &Expr) -> String {
    let list = |items: &[Expr]| items.iter().map(sexp).collect::<Vec<_>>().join(" ");
    match &e.kind {
        ExprKind::Null => "null".to_string(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Number(n) => n.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Array(items) => format!("[{}]", list(items)),
        ExprKind::Var(name) => name.to_string(),
        ExprKind::Field { base, name, optional, .. } => {
            format!("({} {} {name})", if *optional { "?." } else { "." }, sexp(base))
        }
        ExprKind::Index { base, index, optional } => {
            format!("({} {} {})", if *optional { "?[]" } else { "[]" }, sexp(base), sexp(index))
        }
        ExprKind::Call { name, args, .. } => format!("(call {name} {})", list(args)),
        ExprKind::Unary { op: UnaryOp::Not, expr } => format!("(! {})", sexp(expr)),
        ExprKind::Unary { op: UnaryOp::Neg, expr } => format!("(neg {})", sexp(expr)),
        ExprKind::Binary { op, lhs, rhs, .. } => format!("({} {} {})", op.as_str(), sexp(lhs), sexp(rhs)),
        ExprKind::Ternary { cond, then, otherwise } => {
            format!("(if {} {} {})", sexp(cond), sexp(then), sexp(otherwise))
        }
    }
}

fn check(text: &str, expect: &str) {
    match parse_expr(text) {
        Ok(e) => assert_eq!(sexp(&e), expect, "parsing {text:?}"),
        Err(e) => panic!("{text:?} failed: {e:?}"),
    }
}

/// Checks an error's message, span and help.
fn check_err(text: &str, message: &str, span: (usize, usize), help: Option<&str>) {
    let e = parse_expr(text).expect_err(text);
    assert_eq!((e.message.as_str(), e.span, e.help.as_deref()), (message, Span::new(span.0, span.1), help));
}

#[test]
fn literals_and_paths() {
    check("null", "null");
    check("true && false", "(&& true false)");
    check("12 + 1.5 + 007", "(+ (+ 12 1.5) 7)");
    check(r#"'it\'s' + "a\"b\\c\n\t""#, r#"(+ "it's" "a\"b\\c\n\t")"#);
    check("[1, 'a', [],]", r#"[1 "a" []]"#);
    check("a.b[0]['key-x']", r#"([] ([] (. a b) 0) "key-x")"#);
    check("a?.b?.[0].c", "(. (?[] (?. a b) 0) c)");
    check("a . b", "(. a b)");
    check("len(x, 'y',) + f()", r#"(+ (call len x "y") (call f ))"#);
    check("a.in.null", "(. (. a in) null)");
}

#[test]
fn precedence_low_to_high() {
    check("a ?? b || c", "(?? a (|| b c))");
    check("a || b ?? c", "(?? (|| a b) c)");
    check("a || b && c", "(|| a (&& b c))");
    check("a && b == c", "(&& a (== b c))");
    check("a == b < c", "(== a (< b c))");
    check("x in y != z", "(!= (in x y) z)");
    check("a < b + c", "(< a (+ b c))");
    check("a + b * c - d % e", "(- (+ a (* b c)) (% d e))");
    check("-a * !b", "(* (neg a) (! b))");
    check("-a.b[0]", "(neg ([] (. a b) 0))");
    check("!!a", "(! (! a))");
    check("a - -b", "(- a (neg b))");
    check("(a + b) * c", "(* (+ a b) c)");
    check("c ?? d ? a || b : e", "(if (?? c d) (|| a b) e)");
}

#[test]
fn associativity() {
    check("a - b - c", "(- (- a b) c)");
    check("a / b * c", "(* (/ a b) c)");
    check("a ?? b ?? c", "(?? (?? a b) c)");
    check("a <= b >= c", "(>= (<= a b) c)");
    check("a ? b : c ? d : e", "(if a b (if c d e))");
    check("a ? b ? c : d : e", "(if a (if b c d) e)");
    check("a\n?\tb\n:\nc", "(if a b c)");
}

#[test]
fn keyword_boundaries() {
    check("input", "input");
    check("nullable && truthy || falsey", "(|| (&& nullable truthy) falsey)");
    check("inside in index", "(in inside index)");
    check("x in[1]", "(in x [1])");
    check("_in1", "_in1");
    check_err("in", "expected an expression, found `in`", (0, 2), None);
    check_err("x inx", "unexpected `inx`", (2, 5), None);
}

/// Lists every node in pre-order as `text` plus its name or operator span.
fn spans(text: &str) -> Vec<String> {
    fn walk(text: &str, e: &Expr, out: &mut Vec<String>) {
        let mut line = text[e.span.range()].to_string();
        let mut children: Vec<&Expr> = Vec::new();
        match &e.kind {
            ExprKind::Field { base, name_span, .. } => {
                line += &format!(" name={}", &text[name_span.range()]);
                children.push(base);
            }
            ExprKind::Call { name_span, args, .. } => {
                line += &format!(" name={}", &text[name_span.range()]);
                children.extend(args);
            }
            ExprKind::Binary { op_span, lhs, rhs, .. } => {
                line += &format!(" op={}", &text[op_span.range()]);
                children.extend([&**lhs, &**rhs]);
            }
            ExprKind::Index { base, index, .. } => children.extend([&**base, &**index]),
            ExprKind::Unary { expr, .. } => children.push(expr),
            ExprKind::Array(items) => children.extend(items),
            ExprKind::Ternary { cond, then, otherwise } => children.extend([&**cond, &**then, &**otherwise]),
            _ => {}
        }
        out.push(line);
        children.into_iter().for_each(|c| walk(text, c, out));
    }
    let mut out = Vec::new();
    walk(text, &parse_expr(text).unwrap(), &mut out);
    out
}

#[test]
fn spans_of_every_node_kind() {
    let text = "f(a?.b, -x) ?? [1, 'é'] == (c[0]) ? null : true";
    let expect = [
        "f(a?.b, -x) ?? [1, 'é'] == (c[0]) ? null : true",
        "f(a?.b, -x) ?? [1, 'é'] == (c[0]) op=??",
        "f(a?.b, -x) name=f",
        "a?.b name=b",
        "a",
        "-x",
        "x",
        "[1, 'é'] == (c[0]) op===",
        "[1, 'é']",
        "1",
        "'é'",
        "(c[0])",
        "c",
        "0",
        "null",
        "true",
    ];
    assert_eq!(spans(text), expect);
    let e = parse_expr_at("x  .  y", 100).unwrap();
    assert_eq!(e.span, Span::new(100, 107));
    let ExprKind::Field { name_span, .. } = e.kind else { panic!() };
    assert_eq!(name_span, Span::new(106, 107));
}

#[test]
fn errors_have_short_messages_and_spans() {
    check_err("", "empty expression", (0, 0), None);
    check_err(" \n\t", "empty expression", (0, 3), None);
    check_err("a +", "expected an expression", (3, 3), None);
    check_err("(a + b", "expected `)`", (6, 6), None);
    check_err("(a b)", "expected `)`, found `b`", (3, 4), None);
    check_err("f(a b)", "expected `,` or `)`, found `b`", (4, 5), None);
    check_err("[a, b", "expected `,` or `]`", (5, 5), None);
    check_err("a ? b", "expected `:`", (5, 5), None);
    check_err("a.", "expected a field name", (2, 2), None);
    check_err("a b", "unexpected `b`", (2, 3), None);
    check_err(") x", "expected an expression, found `)`", (0, 1), None);
    check_err(
        "a.f(x)",
        "`a.f(…)` is a method call, which expressions do not have",
        (2, 4),
        Some("functions take the value first: write `f(a, x)`"),
    );
    check_err("1.2.3", "invalid number `1.2.3`", (0, 5), None);
    check_err("12abc", "invalid number `12abc`", (0, 5), None);
    check_err(&"9".repeat(400), "number too large", (0, 400), None);
    check_err("x + 'abcdefghijklmnopqrstuvwxyz' 1", "unexpected `1`", (33, 34), None);
    check_err("x y'abcdefghijklmnopqrstuvwxyz'", "unexpected `y`", (2, 3), None);
    check_err("x == 'abcdefghijklmnopqrstuvwxyz' 'b'", "unexpected `'b'`", (34, 37), None);
    check_err("a 'abcdefghijklmnopqrstuvwxyz'", "unexpected `'abcdefghijklmnopqrs…`", (2, 30), None);
}

#[test]
fn common_mistakes_have_help() {
    let compare = Some("use `==` to compare");
    check_err("a = 1", "unexpected `=`", (2, 3), compare);
    check_err("a === 1", "unexpected `===`", (2, 5), compare);
    check_err("a !== 1", "unexpected `!==`", (2, 5), Some("use `!=` to compare"));
    check_err("a and b", "unexpected `and`", (2, 5), Some("use `&&`"));
    check_err("a or b", "unexpected `or`", (2, 4), Some("use `||`"));
    check_err("a & b", "unexpected `&`", (2, 3), Some("use `&&`"));
    check_err("x && not y", "unexpected `not`", (5, 8), Some("use `!` to negate"));
    let braces =
        "`{{ … }}` is not interpolation; write the expression itself, or `<<expr>>` inside a template";
    check_err("{{ a }}", "unexpected `{{`", (0, 2), Some(braces));
    check_err("'abc", "unterminated string", (0, 4), Some("close it with `'`"));
    check_err(r#"x == "a\"#, "unterminated string", (5, 8), Some("close it with `\"`"));
    let escapes = "the escapes are `\\'`, `\\\"`, `\\\\`, `\\n` and `\\t`";
    check_err(r"'a\é'", "unknown escape `\\é`", (2, 5), Some(escapes));
    let method = "`path.endswith(…)` is a method call, which expressions do not have";
    let hint = Some("functions take the value first: write `ends_with(path, '.lock')`");
    check_err("path.endswith('.lock')", method, (5, 14), hint);
    let method = "`a.b[0].lower(…)` is a method call, which expressions do not have";
    check_err(
        "x && a.b[0].lower() == 'x'",
        method,
        (12, 18),
        Some("functions take the value first: write `lower(a.b[0])`"),
    );
    check_err("1 + 123456789012345678901234x", "invalid number `12345678901234567890…`", (4, 29), None);
}

#[test]
fn deep_nesting_is_refused_without_overflow() {
    let deep = format!("expression nested too deeply (limit {MAX_NESTING})");
    let help = Some("split it into smaller expressions");
    let n = 5_000;
    let cases = [
        format!("{}a{}", "(".repeat(n), ")".repeat(n)),
        format!("{}a{}", "[".repeat(n), "]".repeat(n)),
        format!("{}a", "!".repeat(n)),
        format!("{}a", "-".repeat(n)),
        format!("{}a", "- ".repeat(n)),
        format!("{}a", "!(".repeat(n)),
        format!("{}c", "a ? b : ".repeat(n)),
        format!("{}b{}", "a ? ".repeat(n), " : c".repeat(n)),
        format!("x{}", "?.[x".repeat(n)),
    ];
    for text in &cases {
        let e = parse_expr(text).expect_err(&text[..10]);
        assert_eq!((e.message.as_str(), e.help.as_deref()), (deep.as_str(), help), "{}", &text[..10]);
    }
    check_err(&format!("{}a", "(".repeat(n)), &deep, (64, 65), help);
    // Exactly at the limit is fine.
    let at_limit = format!("{}a{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    assert!(parse_expr(&at_limit).is_ok());
    let mixed = format!("{}a{}", "-[!(".repeat(MAX_NESTING / 4), ")]".repeat(MAX_NESTING / 4));
    assert!(parse_expr(&mixed).is_ok());
    let ternaries = format!("{}b{}", "a ? ".repeat(MAX_NESTING), " : c".repeat(MAX_NESTING));
    assert!(parse_expr(&ternaries).is_ok());
    // Every precedence level at every nesting level recurses; it must still fit.
    let ladder = format!("{}h{}", "(a ?? b || c && d == e < f + g * ".repeat(MAX_NESTING), ")".repeat(64));
    assert!(parse_expr(&ladder).is_err_and(|e| e.message.starts_with("expression too long")));
    let ladder = format!("{}h{}", "(a ?? b || c && d == e < f + g * ".repeat(30), ")".repeat(30));
    assert!(parse_expr(&ladder).is_ok());
    // Prefixes end at the next operator, so a long chain of them is not deep.
    assert!(parse_expr(&format!("{}!a", "!a && ".repeat(100))).is_ok());
}

#[test]
fn long_chains_are_refused_without_overflow() {
    let long = format!("expression too long (limit {MAX_AST_DEPTH} nested operations)");
    for text in [format!("a{}", " + a".repeat(10_000)), format!("a{}", ".b".repeat(10_000))] {
        assert_eq!(parse_expr(&text).expect_err("too long").message, long);
    }
    assert!(parse_expr(&format!("a{}", " + a".repeat(200))).is_ok());
}

/// The fast path's answer, checked against the grammar's: when it takes
/// an expression, pest must give the same AST and spans.
fn plain_path(text: &str) -> Option<Expr> {
    let fast = parse_plain_path(text, 7)?;
    assert_eq!(Ok(&fast), parse_with_pest(text, 7).as_ref(), "{text:?}");
    Some(fast)
}

#[test]
fn plain_paths_skip_pest_with_the_same_ast() {
    let taken = [
        "params",
        "params.repo",
        "c41.title",
        "  loop.index\n",
        "x  .  y",
        "a\n.\tb\r\n. c",
        "_a._b.C_9",
        "a.in.null.true.false",
        "input.nullable",
        "truthy.falsey",
        "inx",
        "null_",
        "in_.x",
    ];
    for text in taken {
        assert!(plain_path(text).is_some(), "{text:?} should take the fast path");
    }
    let left = [
        "null",
        "true",
        "false",
        "in",
        " in ",
        "in.x",
        "null.x",
        "true . x",
        "a.",
        ".a",
        "a..b",
        "a.1",
        "1.a",
        "a?.b",
        "a.b?.c",
        "a.b()",
        "f(x)",
        "f (x)",
        "a b",
        "a.b c",
        "a.b[0]",
        "a == b",
        "a.b == 'x'",
        "!a.b",
        "-a",
        "(a.b)",
        "é.x",
        "a.é",
        "a .b\u{a0}",
    ];
    for text in left {
        assert!(plain_path(text).is_none(), "{text:?} should be left to pest");
    }
    // Long paths are left to pest, which enforces MAX_AST_DEPTH.
    let at = format!("a{}", ".b".repeat(PLAIN_PATH_MAX_FIELDS));
    assert!(plain_path(&at).is_some());
    let past = format!("a{}", ".b".repeat(PLAIN_PATH_MAX_FIELDS + 1));
    assert!(parse_plain_path(&past, 0).is_none());
    assert!(parse_expr(&past).is_ok());
    let too_long = format!("a{}", ".b".repeat(MAX_AST_DEPTH));
    assert!(parse_expr(&too_long).is_err_and(|e| e.message.starts_with("expression too long")));
}

proptest! {
    /// Generated paths: words (keywords and words starting with one
    /// included) joined by `.` with blanks around, every one checked
    /// against pest.
    #[test]
    fn plain_paths_match_the_grammar(
        lead in "[ \t\r\n]{0,2}",
        root in "null|true|false|in|nullx|inner|false_|[a-zA-Z_][a-zA-Z0-9_]{0,5}",
        fields in proptest::collection::vec(
            ("[ \t\n]{0,2}", "[ \t\r]{0,2}", "null|true|false|in|[a-zA-Z_][a-zA-Z0-9_]{0,5}"),
            0..6,
        ),
        trail in "[ \t\r\n]{0,2}",
    ) {
        let mut text = format!("{lead}{root}");
        for (before, after, name) in &fields {
            text += &format!("{before}.{after}{name}");
        }
        text += &trail;
        let keyword = matches!(root.as_str(), "null" | "true" | "false" | "in");
        let fast = plain_path(&text);
        prop_assert_eq!(fast.is_some(), !keyword, "{:?}", text);
        prop_assert_eq!(parse_expr_at(&text, 7).ok(), parse_with_pest(&text, 7).ok());
    }

    /// Near misses: whatever the fast path takes, pest parses the same.
    #[test]
    fn the_fast_path_never_disagrees(text in r"(null|true|in|[a-c_]|[0-9]|[ .?()\[\]'=!-]){0,12}") {
        if let Some(fast) = parse_plain_path(&text, 0) {
            prop_assert_eq!(Ok(fast), parse_with_pest(&text, 0));
        }
    }
}

proptest! {
    #[test]
    fn never_panics(text in r#"[a-z0-9 ()\[\]'"\\!?.:,=<>&|+*/%{}-]{0,40}|\PC{0,20}"#) {
        match parse_expr_at(&text, 3) {
            Ok(e) => prop_assert!(e.span.start >= 3 && e.span.end as usize <= text.len() + 3),
            Err(e) => prop_assert!(e.span.start <= e.span.end && e.span.end as usize <= text.len() + 3),
        }
    }
}

/// The coalescing fast path's answer, checked against the grammar's.
fn path_or_string(text: &str) -> Option<Expr> {
    let fast = parse_path_or_string(text, 5)?;
    assert_eq!(Ok(&fast), parse_with_pest(text, 5).as_ref(), "{text:?}");
    Some(fast)
}

#[test]
fn a_path_or_a_string_skips_pest_with_the_same_ast() {
    let taken = [
        "a ?? ''",
        "mr_data.title ?? ''",
        "a.b??\"x\"",
        " a . in ?? 'é ✓ \"' \n",
        "x ?? \"it's\"",
        "a ??\t'multi\nline'",
    ];
    for text in taken {
        assert!(path_or_string(text).is_some(), "{text:?} should take the fast path");
    }
    let left = [
        "a ?? b",
        "a ?? 1",
        "a ?? '\\n'",
        "a ?? 'x",
        "a ?? 'x' ?? ''",
        "a ?? ''.x",
        "a ?? '' b",
        "a ?? ''?",
        "a ? '' : ''",
        "a ?. b ?? ''",
        "a?.b ?? ''",
        "a ??? ''",
        "null ?? ''",
        "a[0] ?? ''",
        "?? ''",
        "a ?",
        "a",
    ];
    for text in left {
        assert!(path_or_string(text).is_none(), "{text:?} should be left to pest");
    }
}

proptest! {
    /// Near misses of `path ?? 'text'`: whatever the fast path takes, pest
    /// parses the same.
    #[test]
    fn the_coalescing_fast_path_never_disagrees(
        text in r#"[ a-c.]{0,6}(\?\?|\?|\?\.)?[ \t]{0,2}(''|""|'[a-c "\\]{0,3}'|"[a-c '\\]{0,3}"|[a-c'"])[ .?a]{0,2}"#
    ) {
        if let Some(fast) = parse_path_or_string(&text, 0) {
            prop_assert_eq!(Ok(fast), parse_with_pest(&text, 0));
        }
    }
}
