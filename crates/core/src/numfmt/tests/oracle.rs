//! Differential tests against PHP 8.2: each test generates a
//! deterministic batch of inputs, has `php` compute the results, and
//! compares them with ours. Without `php` they print a skip notice and
//! pass; the static tables in `cases` still run.

use super::*;

/// Doubles that exercise the formatting and rounding code paths.
fn oracle_doubles() -> Vec<f64> {
    let mut v: Vec<f64> = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::EPSILON,
        0.1 + 0.2,
        1.0 / 3.0,
        2.0 / 3.0,
        std::f64::consts::PI,
        std::f64::consts::E,
    ];
    // Powers of ten (parsed, so exactly the nearest doubles) and their
    // neighbours, around every notation threshold.
    for k in -325..=308 {
        let p: f64 = format!("1e{k}").parse().unwrap();
        v.push(p);
        if (-8..=22).contains(&k) {
            v.push(f64::from_bits(p.to_bits() + 1));
            v.push(f64::from_bits(p.to_bits() - 1));
            v.push(p * 9.99999999999999);
            v.push(p * 1.5);
            v.push(p * 9.5);
            v.push(p * f64::from_bits(0x3fefffffffffffff));
        }
    }
    // Powers of two and integers near 2^53 and 2^63.
    for k in -1074..=1023 {
        if k % 7 == 0 || (50..=66).contains(&k) {
            v.push(2f64.powi(k));
        }
    }
    for d in -5i64..=5 {
        v.push((9007199254740992i64 + d) as f64);
        v.push(9223372036854775807i64 as f64 + d as f64 * 2048.0);
    }
    // Subnormals.
    for bits in [1u64, 2, 3, 0xf_ffff_ffff_ffff, 0x8_0000_0000_0000, 12345678901] {
        v.push(f64::from_bits(bits));
    }
    // Decimal halfway cases and classic rounding traps.
    for s in [
        "0.5",
        "1.5",
        "2.5",
        "-2.5",
        "0.125",
        "0.375",
        "1.005",
        "2.675",
        "1.955",
        "5.045",
        "5.055",
        "1234.5678",
        "0.285",
        "1.45",
        "8.325",
        "99.995",
        "0.49999999999999994",
        "4503599627370495.5",
        "0.30000000000000004",
        "123456789012345.6",
        "999999999999999.9",
        "99999999999999.99",
        "9999999999999.999",
        "0.00009999999999999999",
        "1e-5",
        "0.00012345",
        "1234567.891",
        "1.23456789012345678",
        "100",
        "1e22",
        "1e23",
        "5e-324",
        "2.2250738585072014e-308",
    ] {
        v.push(s.parse().unwrap());
    }
    // Random short decimals, like the values scripts print.
    let mut rng = XorShift(0x9e3779b97f4a7c15);
    for _ in 0..1500 {
        let digits = rng.below(17) + 1;
        let mantissa = rng.below(10u64.pow(digits as u32));
        let exp = rng.below(40) as i32 - 20;
        v.push(format!("{mantissa}e{exp}").parse().unwrap());
    }
    // Integers whose rounding to fewer digits is an exact tie, which
    // dtoa treats specially below 10^15.
    for _ in 0..800 {
        let j = rng.below(15) as u32 + 1;
        let head_digits = rng.below(8) as u32 + 1;
        let head = rng.below(10u64.pow(head_digits));
        let tie = head.saturating_mul(10u64.pow(j)).saturating_add(5 * 10u64.pow(j - 1));
        v.push(tie as f64);
    }
    // Random bit patterns (finite ones).
    for _ in 0..2500 {
        let f = f64::from_bits(rng.next());
        if f.is_finite() {
            v.push(f);
        }
    }
    let negatives: Vec<f64> = v.iter().step_by(3).map(|f| -f).collect();
    v.extend(negatives);
    v
}

/// `printf` conversions applied to every oracle double.
const FLOAT_FORMATS: &[&str] = &[
    "%e", "%.3e", "%.0e", "%E", "%.15e", "%.20e", "%f", "%.2f", "%.0f", "%.15f", "%.53f", "%F", "%g", "%G", "%.3g",
    "%.10g", "%.17g", "%.0g", "%h", "%H", "%+.1e", "%'*15.4f", "%-12.3g", "%012.4e", "%+08.2f", "%-+9.1f", "% 10.3F",
    "%5.1g", "%.60f", "%d", "%u", "%x", "%s", "%c", "%+05g", "%-010.2e", "%.6G", "%.14g", "%.1g", "%.2g", "%.5e",
];

const ROUND_PLACES: &[i32] = &[0, 1, 2, 3, -1, -2, 5, 10, 15, 20, 25, -20];

#[test]
#[cfg_attr(miri, ignore = "runs php as a child process")]
fn floats_match_php() {
    let values = oracle_doubles();
    let mut input = String::new();
    for f in &values {
        input.push_str(&format!("{:016x}\n", f.to_bits()));
    }
    let formats: Vec<String> = FLOAT_FORMATS.iter().map(|f| php_bytes(f.as_bytes())).collect();
    let places: Vec<String> = ROUND_PLACES.iter().map(|p| p.to_string()).collect();
    let script = format!(
        r#"<?php
$formats = [{formats}];
$places = [{places}];
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $h) {{
    $f = unpack('E', hex2bin($h))[1];
    $r = [];
    $r[] = (string)$f;
    $r[] = var_export($f, true);
    $j = json_encode($f); $r[] = $j === false ? '!' : $j;
    $j = json_encode($f, JSON_PRESERVE_ZERO_FRACTION); $r[] = $j === false ? '!' : $j;
    $r[] = serialize($f);
    ini_set('precision', '17'); $r[] = (string)$f;
    ini_set('precision', '5'); $r[] = (string)$f;
    ini_set('precision', '-1'); $r[] = (string)$f;
    ini_set('precision', '0'); $r[] = (string)$f;
    ini_set('precision', '40'); $r[] = (string)$f;
    ini_set('precision', '14');
    foreach ($formats as $fmt) {{ $r[] = @sprintf($fmt, $f); }}
    $r[] = sprintf('%.*g|%.*G|%.*h', -1, $f, -1, $f, -1, $f);
    foreach ($places as $p) {{ $r[] = bin2hex(pack('E', round($f, $p))); }}
    foreach ([2, 3, 4] as $m) {{ $r[] = bin2hex(pack('E', round($f, 2, $m))); }}
    foreach ([0, 2, 5] as $d) {{ $r[] = number_format($f, $d); }}
    $r[] = number_format($f, 3, ',', '.');
    $r[] = (string)(int)$f;
    echo implode("\t", array_map('bin2hex', $r)), "\n";
}}
"#,
        formats = formats.join(", "),
        places = places.join(", ")
    );
    let Some(out) = run_php("floats", &script, input.as_bytes()) else {
        return;
    };

    let mut m = Mismatches::default();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), values.len());
    for (&f, line) in values.iter().zip(lines) {
        let fields: Vec<Vec<u8>> = line.split(|&b| b == b'\t').map(unhex).collect();
        let mut ours: Vec<(String, Vec<u8>)> = Vec::new();
        let s = |x: String| x.into_bytes();
        ours.push(("echo".into(), s(php_float_to_string(f, 14))));
        ours.push(("var_export".into(), s(php_float_var_export(f))));
        ours.push(("json".into(), s(php_float_json(f, false).unwrap_or_else(|| "!".into()))));
        ours.push((
            "json zero frac".into(),
            s(php_float_json(f, true).unwrap_or_else(|| "!".into())),
        ));
        ours.push(("serialize".into(), s(format!("d:{};", php_float_repr(f)))));
        for p in [17, 5, -1, 0, 40] {
            ours.push((format!("precision {p}"), s(php_float_to_string(f, p))));
        }
        for fmt in FLOAT_FORMATS {
            let r = php_sprintf(fmt.as_bytes(), &[TestArg::Float(f)]).unwrap();
            ours.push((format!("sprintf {fmt}"), r));
        }
        let minus_one = [
            TestArg::Int(-1),
            TestArg::Float(f),
            TestArg::Int(-1),
            TestArg::Float(f),
            TestArg::Int(-1),
            TestArg::Float(f),
        ];
        ours.push(("%.*g -1".into(), php_sprintf(b"%.*g|%.*G|%.*h", &minus_one).unwrap()));
        for &p in ROUND_PLACES {
            ours.push((format!("round {p}"), s(hex(&php_round(f, p).to_be_bytes()))));
        }
        for (mode, name) in [
            (RoundMode::HalfDown, 2),
            (RoundMode::HalfEven, 3),
            (RoundMode::HalfOdd, 4),
        ] {
            ours.push((
                format!("round 2 mode {name}"),
                s(hex(&php_round_mode(f, 2, mode).to_be_bytes())),
            ));
        }
        for d in [0, 2, 5] {
            ours.push((format!("number_format {d}"), number_format(f, d, b".", b",")));
        }
        ours.push(("number_format 3 ,.".into(), number_format(f, 3, b",", b".")));
        ours.push(("(int)".into(), s(int_to_string(float_to_int(f)))));

        assert_eq!(fields.len(), ours.len(), "field count for {f:e}");
        for ((what, mine), theirs) in ours.iter().zip(&fields) {
            m.check(|| format!("{what} of {f:e} ({:016x})", f.to_bits()), mine, theirs);
        }
    }
    m.finish("floats_match_php");
}

/// Random byte strings biased towards numeric-looking ones.
fn numeric_like_strings() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "",
        " ",
        "0",
        "-0",
        "+0",
        "00",
        "1",
        "-1",
        "12abc",
        "1e3",
        "1E3",
        "1e",
        "1e+",
        "1e+5x",
        ".5",
        "5.",
        ".",
        "-.",
        "-.5",
        ".e5",
        "1.e5",
        "0x1A",
        "0b101",
        "0o17",
        "017",
        " 1",
        "1 ",
        "\t\n1\r\x0b\x0c",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        " -9223372036854775808 ",
        "9223372036854775807 ",
        "99999999999999999999",
        "-99999999999999999999",
        "00000000000000000000000000001",
        "123456789012345678901.5",
        "1e1000",
        "-1e1000",
        "1e-400",
        "abc",
        "a",
        "z",
        "Zz",
        "zz",
        "a9",
        "9z",
        "!",
        "a!",
        "!z",
        "inf",
        "NAN",
        "1_000",
        "١",
        "\x001",
        "1\x00",
        "+-5",
        "- 5",
        "0e0",
        "2.5e-3x",
        "  .5e+2  ",
        "1e1e1",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();

    let mut rng = XorShift(0x2545f4914f6cdd1d);
    let alphabet: &[u8] = b"0123456789012345678900000 \t\n\r\x0b\x0c.eE+-xXbBoazZ9_!\x00\xff";
    for _ in 0..2500 {
        let len = rng.below(14) as usize;
        v.push((0..len).map(|_| *rng.pick(alphabet)).collect());
    }
    // Structured: [ws][sign][digits][.digits][e[sign]digits][ws][junk].
    for _ in 0..2500 {
        let mut s = Vec::new();
        let ws: &[u8] = b" \t\n\r\x0b\x0c";
        for _ in 0..rng.below(3) {
            s.push(*rng.pick(ws));
        }
        match rng.below(4) {
            0 => s.push(b'-'),
            1 => s.push(b'+'),
            _ => {}
        }
        let int_digits = match rng.below(6) {
            0 => 0,
            1 => rng.below(25),
            2 => 19,
            3 => 20,
            _ => rng.below(6),
        };
        for i in 0..int_digits {
            s.push(if i == 0 && rng.below(2) == 0 {
                b'9'
            } else {
                b'0' + rng.below(10) as u8
            });
        }
        if rng.below(3) == 0 {
            s.push(b'.');
            for _ in 0..rng.below(5) {
                s.push(b'0' + rng.below(10) as u8);
            }
        }
        if rng.below(4) == 0 {
            s.push(*rng.pick(b"eE"));
            if rng.below(2) == 0 {
                s.push(*rng.pick(b"+-"));
            }
            for _ in 0..rng.below(4) {
                s.push(b'0' + rng.below(10) as u8);
            }
        }
        for _ in 0..rng.below(2) {
            s.push(*rng.pick(ws));
        }
        if rng.below(4) == 0 {
            s.push(*rng.pick(b"ax.e 9Z!"));
        }
        v.push(s);
    }
    v
}

const INTVAL_BASES: &[i64] = &[0, 2, 8, 16, 36, 10, 1, 37];

#[test]
#[cfg_attr(miri, ignore = "runs php as a child process")]
fn numeric_strings_match_php() {
    let strings = numeric_like_strings();
    let mut input = String::new();
    for s in &strings {
        input.push_str(&hex(s));
        input.push('\n');
    }
    let bases: Vec<String> = INTVAL_BASES.iter().map(|b| b.to_string()).collect();
    let script = format!(
        r#"<?php
$bases = [{bases}];
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $h) {{
    $s = hex2bin($h);
    $r = [];
    $r[] = is_numeric($s) ? '1' : '0';
    $r[] = (string)(int)$s;
    $r[] = bin2hex(pack('E', (float)$s));
    $warned = false;
    set_error_handler(function () use (&$warned) {{ $warned = true; return true; }});
    try {{
        $v = $s * 1;
        $r[] = (is_int($v) ? 'i:' . $v : 'f:' . bin2hex(pack('E', $v))) . ($warned ? ':w' : '');
    }} catch (TypeError $e) {{
        $r[] = 'T';
    }}
    restore_error_handler();
    foreach ($bases as $b) {{ $r[] = (string)intval($s, $b); }}
    if (!is_numeric($s)) {{ $x = $s; $x++; $r[] = bin2hex($x); }} else {{ $r[] = '-'; }}
    echo implode("\t", $r), "\n";
}}
"#,
        bases = bases.join(", ")
    );
    let Some(out) = run_php("numeric", &script, input.as_bytes()) else {
        return;
    };
    let mut m = Mismatches::default();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), strings.len());
    for (s, line) in strings.iter().zip(lines) {
        let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let mut ours: Vec<(String, Vec<u8>)> = Vec::new();
        let numeric = is_numeric_str(s);
        ours.push((
            "is_numeric".into(),
            if numeric.is_some() {
                b"1".to_vec()
            } else {
                b"0".to_vec()
            },
        ));
        ours.push(("(int)".into(), int_to_string(str_to_int(s)).into_bytes()));
        ours.push(("(float)".into(), hex(&str_to_float(s).to_be_bytes()).into_bytes()));
        let arith = match parse_numeric(s) {
            None => "T".to_string(),
            Some((n, whole)) => {
                let v = match n {
                    Number::Int(i) => format!("i:{i}"),
                    Number::Float(f) => format!("f:{}", hex(&f.to_be_bytes())),
                };
                if whole {
                    v
                } else {
                    v + ":w"
                }
            }
        };
        ours.push(("$s * 1".into(), arith.into_bytes()));
        for &b in INTVAL_BASES {
            ours.push((
                format!("intval base {b}"),
                int_to_string(intval_base(s, b)).into_bytes(),
            ));
        }
        ours.push((
            "$s++".into(),
            match numeric {
                Some(_) => b"-".to_vec(),
                None => hex(&str_increment(s)).into_bytes(),
            },
        ));
        assert_eq!(fields.len(), ours.len());
        for ((what, mine), theirs) in ours.iter().zip(&fields) {
            m.check(|| format!("{what} of {:?}", String::from_utf8_lossy(s)), mine, theirs);
        }
    }
    m.finish("numeric_strings_match_php");
}

#[test]
#[cfg_attr(miri, ignore = "runs php as a child process")]
fn string_comparison_matches_php() {
    let strings = numeric_like_strings();
    let mut rng = XorShift(0xdeadbeefcafef00d);
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
    for _ in 0..6000 {
        let a = rng.pick(&strings);
        let b = if rng.below(8) == 0 { a } else { rng.pick(&strings) };
        pairs.push((a, b));
    }
    let mut input = String::new();
    for (a, b) in &pairs {
        input.push_str(&format!("{}\t{}\n", hex(a), hex(b)));
    }
    let script = r#"<?php
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $line) {
    [$a, $b] = array_map('hex2bin', explode("\t", $line));
    echo ($a <=> $b), ' ', ($a == $b ? 1 : 0), "\n";
}
"#;
    let Some(out) = run_php("compare", script, input.as_bytes()) else {
        return;
    };
    let mut m = Mismatches::default();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), pairs.len());
    for ((a, b), line) in pairs.iter().zip(lines) {
        let ord = match smart_str_compare(a, b) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        };
        let ours = format!("{ord} {}", u8::from(smart_str_equals(a, b)));
        m.check(
            || format!("{:?} <=> {:?}", String::from_utf8_lossy(a), String::from_utf8_lossy(b)),
            ours.as_bytes(),
            line,
        );
    }
    m.finish("string_comparison_matches_php");
}

#[test]
#[cfg_attr(miri, ignore = "runs php as a child process")]
fn rounding_matches_php() {
    let mut rng = XorShift(0x0123456789abcdef);
    let mut cases: Vec<(f64, i32, u8)> = Vec::new();
    let places: &[i32] = &[
        -30, -16, -15, -10, -5, -3, -2, -1, 0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 5, 6, 8, 10, 12, 14, 15, 16, 17, 20, 22, 23,
        24, 30, 50, 300, 330,
    ];
    for _ in 0..12000 {
        let f: f64 = match rng.below(4) {
            // Short decimals with a trailing 5: the tie-breaking cases.
            0 => {
                let digits = rng.below(15) + 1;
                let m = rng.below(10u64.pow(digits as u32)) * 10 + 5;
                let e = rng.below(30) as i32 - 20;
                format!("{m}e{e}").parse().unwrap()
            }
            1 => {
                let digits = rng.below(17) + 1;
                let m = rng.below(10u64.pow(digits as u32));
                let e = rng.below(40) as i32 - 25;
                format!("{m}e{e}").parse().unwrap()
            }
            2 => (rng.below(2_000_000) as f64 - 1_000_000.0) / 8.0,
            _ => {
                let f = f64::from_bits(rng.next());
                if f.is_finite() {
                    f
                } else {
                    1.5
                }
            }
        };
        let f = if rng.below(3) == 0 { -f } else { f };
        cases.push((f, *rng.pick(places), (rng.below(4) + 1) as u8));
    }
    let mut input = String::new();
    for (f, p, mode) in &cases {
        input.push_str(&format!("{:016x} {p} {mode}\n", f.to_bits()));
    }
    let script = r#"<?php
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $line) {
    [$h, $p, $m] = explode(' ', $line);
    $f = unpack('E', hex2bin($h))[1];
    echo bin2hex(pack('E', round($f, (int)$p, (int)$m))), "\n";
}
"#;
    let Some(out) = run_php("round", script, input.as_bytes()) else {
        return;
    };
    let mut m = Mismatches::default();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), cases.len());
    for (&(f, p, mode), line) in cases.iter().zip(lines) {
        let mode = RoundMode::from_php(i64::from(mode)).unwrap();
        let ours = php_round_mode(f, p, mode);
        m.check(
            || format!("round({f:e}, {p}, {mode:?}) = {ours:e}"),
            hex(&ours.to_be_bytes()).as_bytes(),
            line,
        );
    }
    m.finish("rounding_matches_php");
}

/// A random `printf` format with its arguments.
fn random_format(rng: &mut XorShift, doubles: &[f64]) -> (Vec<u8>, Vec<TestArg>) {
    let mut fmt = Vec::new();
    let mut args = Vec::new();
    let convs = rng.below(4) + 1;
    for _ in 0..convs {
        if rng.below(3) == 0 {
            let texts: &[&[u8]] = &[b"abc ", b"-", b"%%", b" x=", b"\xff"];
            fmt.extend_from_slice(rng.pick::<&[u8]>(texts));
        }
        fmt.push(b'%');
        if rng.below(8) == 0 {
            fmt.extend_from_slice(format!("{}$", rng.below(4) + 1).as_bytes());
        }
        for _ in 0..rng.below(3) {
            let flags: &[&[u8]] = &[b"-", b"+", b" ", b"0", b"'x", b"'*", b"'0"];
            fmt.extend_from_slice(rng.pick::<&[u8]>(flags));
        }
        match rng.below(6) {
            0 | 1 => {}
            2 => fmt.push(b'*'),
            _ => fmt.extend_from_slice(rng.below(16).to_string().as_bytes()),
        }
        match rng.below(6) {
            0..=2 => {}
            3 => fmt.push(b'.'),
            4 => fmt.extend_from_slice(b".*"),
            _ => fmt.extend_from_slice(format!(".{}", rng.below(14)).as_bytes()),
        }
        if rng.below(10) == 0 {
            fmt.push(b'l');
        }
        let specs = b"bcdeEfFgGhHosuxX%bdsdsfeg";
        if rng.below(40) == 0 {
            fmt.push(*rng.pick(b"yq\x00"));
        } else if rng.below(60) != 0 {
            fmt.push(*rng.pick(specs));
        }
    }
    let nargs = rng.below(6);
    for _ in 0..nargs {
        args.push(match rng.below(7) {
            0 => TestArg::Int(*rng.pick(&[0, 1, -1, 42, -42, 255, 65, i64::MAX, i64::MIN, 1 << 40, 7, 12])),
            1 => TestArg::Int(rng.next() as i64 >> rng.below(64)),
            2 | 3 => TestArg::Float(*rng.pick(doubles)),
            4 => {
                let strings: &[&[u8]] = &[
                    b"hello",
                    b"",
                    b"12abc",
                    b" 1.5",
                    b"-0",
                    b"1e3",
                    b"abc",
                    b"9999999999999999999",
                    b"\xff\x00x",
                ];
                TestArg::Str(rng.pick(strings).to_vec())
            }
            _ => TestArg::Int(rng.below(20) as i64 - 2),
        });
    }
    // A `*` width between a few thousand and INT_MAX is valid but makes
    // gigabytes of padding; keep those small.
    if fmt.contains(&b'*') {
        for a in &mut args {
            if let TestArg::Int(i) = a {
                if (1000..=i64::from(i32::MAX)).contains(i) {
                    *i %= 100;
                }
            }
        }
    }
    (fmt, args)
}

#[test]
#[cfg_attr(miri, ignore = "runs php as a child process")]
fn sprintf_matches_php() {
    let doubles = oracle_doubles();
    let mut rng = XorShift(0x51afd7ed558ccd01);
    let cases: Vec<(Vec<u8>, Vec<TestArg>)> = (0..30000).map(|_| random_format(&mut rng, &doubles)).collect();
    let mut input = String::new();
    for (fmt, args) in &cases {
        input.push_str(&hex(fmt));
        for a in args {
            input.push(' ');
            match a {
                TestArg::Int(i) => input.push_str(&format!("i{i}")),
                TestArg::Float(f) => input.push_str(&format!("f{:016x}", f.to_bits())),
                TestArg::Str(s) => input.push_str(&format!("s{}", hex(s))),
            }
        }
        input.push('\n');
    }
    let script = r#"<?php
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $line) {
    $parts = explode(' ', $line);
    $fmt = hex2bin(array_shift($parts));
    $args = [];
    foreach ($parts as $p) {
        $v = substr($p, 1);
        switch ($p[0]) {
            case 'i': $args[] = (int)$v; break;
            case 'f': $args[] = unpack('E', hex2bin($v))[1]; break;
            case 's': $args[] = hex2bin($v); break;
        }
    }
    $notices = [];
    set_error_handler(function ($no, $msg) use (&$notices) { $notices[] = $msg; return true; });
    try {
        $r = 'ok ' . bin2hex(sprintf($fmt, ...$args));
    } catch (\Throwable $e) {
        $r = 'err ' . get_class($e) . ' ' . bin2hex($e->getMessage());
    }
    restore_error_handler();
    try {
        $r .= ' v ' . bin2hex(vsprintf($fmt, $args));
    } catch (\Throwable $e) {
        $r .= ' verr ' . get_class($e) . ' ' . bin2hex($e->getMessage());
    }
    echo $r, ' ', bin2hex(implode('|', $notices)), "\n";
}
"#;
    let Some(out) = run_php("sprintf", script, input.as_bytes()) else {
        return;
    };
    let mut m = Mismatches::default();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), cases.len());
    for ((fmt, args), line) in cases.iter().zip(lines) {
        let render = |source: ArgSource, notices: &mut Vec<String>| {
            let mut buf = Vec::new();
            match php_sprintf_into(&mut buf, fmt, args, source, &mut |n| {
                notices.push(format!("sprintf(): {n}"))
            }) {
                Ok(()) => (true, hex(&buf)),
                Err(e) => (false, format!("{} {}", e.class_name(), hex(&e.message))),
            }
        };
        let mut notices = Vec::new();
        let (ok, text) = render(ArgSource::Variadic(1), &mut notices);
        let mut ours = if ok {
            format!("ok {text}")
        } else {
            format!("err {text}")
        };
        let (vok, vtext) = render(ArgSource::Array, &mut Vec::new());
        ours.push_str(&if vok {
            format!(" v {vtext}")
        } else {
            format!(" verr {vtext}")
        });
        ours.push(' ');
        ours.push_str(&hex(notices.join("|").as_bytes()));
        m.check(
            || format!("sprintf({:?}, {:?})", String::from_utf8_lossy(fmt), args),
            ours.as_bytes(),
            line,
        );
    }
    m.finish("sprintf_matches_php");
}

#[test]
#[cfg_attr(miri, ignore = "runs php as a child process")]
fn mt_rand_matches_php() {
    let mut rng = XorShift(0x7f4a7c159e3779b9);
    let bounds: &[i64] = &[
        0,
        1,
        -1,
        5,
        100,
        -1000,
        255,
        i64::from(i32::MAX),
        u32::MAX as i64,
        1 << 32,
        3_000_000_000,
        1 << 40,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
        -(1 << 33),
    ];
    let mut cases = Vec::new();
    for _ in 0..400 {
        let seed = rng.next() as i64 >> rng.below(64);
        let (a, b) = if rng.below(2) == 0 {
            (*rng.pick(bounds), *rng.pick(bounds))
        } else {
            (rng.next() as i64 >> rng.below(64), rng.next() as i64 >> rng.below(64))
        };
        let (min, max) = if a <= b { (a, b) } else { (b, a) };
        let legacy = rng.below(5) == 0;
        cases.push((seed, min, max, legacy));
    }
    let mut input = String::new();
    for (seed, min, max, legacy) in &cases {
        input.push_str(&format!("{seed} {min} {max} {}\n", u8::from(*legacy)));
    }
    let script = r#"<?php
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $line) {
    [$seed, $min, $max, $legacy] = array_map('intval', explode(' ', $line));
    mt_srand($seed, $legacy ? MT_RAND_PHP : MT_RAND_MT19937);
    $r = [];
    for ($i = 0; $i < 4; $i++) { $r[] = mt_rand(); }
    for ($i = 0; $i < 6; $i++) { $r[] = mt_rand($min, $max); }
    echo implode(' ', $r), "\n";
}
"#;
    let Some(out) = run_php("mt_rand", script, input.as_bytes()) else {
        return;
    };
    let mut m = Mismatches::default();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), cases.len());
    for (&(seed, min, max, legacy), line) in cases.iter().zip(lines) {
        let mode = if legacy { MtRandMode::Php } else { MtRandMode::Mt19937 };
        let mut g = MtRand::with_mode(seed as u32, mode);
        let mut r: Vec<String> = (0..4).map(|_| (g.next_u32() >> 1).to_string()).collect();
        r.extend((0..6).map(|_| g.range(min, max).to_string()));
        m.check(
            || format!("mt_srand({seed}, {mode:?}); mt_rand({min}, {max})"),
            r.join(" ").as_bytes(),
            line,
        );
    }
    m.finish("mt_rand_matches_php");
}
