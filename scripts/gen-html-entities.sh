#!/usr/bin/env bash
# Regenerates crates/vm/src/builtins/string/entities/tables.rs, the HTML
# entity tables of htmlentities, html_entity_decode and
# get_html_translation_table, from PHP 8.2 itself:
#
#   scripts/gen-html-entities.sh            # writes the file
#   PHP=/path/to/php scripts/gen-html-entities.sh
#
# - what htmlentities writes for each character (HTML 4.01 and HTML 5) is
#   get_html_translation_table(HTML_ENTITIES, ENT_QUOTES | doctype), in
#   its order;
# - the names html_entity_decode knows are the WHATWG list (Python's
#   html.entities.html5 supplies the candidates), each kept only if PHP
#   decodes it, with what PHP decodes it to;
# - the single-byte charsets' code pages are what PHP's
#   html_entity_decode("&#N;", ENT_QUOTES | ENT_XHTML, charset) turns
#   each code point up to U+FFFF into, inverted.
set -euo pipefail
cd "$(dirname "$0")/.."
PHP=${PHP:-php}
out=crates/vm/src/builtins/string/entities/tables.rs
names=$(mktemp)
trap 'rm -f "$names"' EXIT
python3 -c '
import html.entities
for k in sorted(html.entities.html5):
    if k.endswith(";"):
        print(k[:-1])
' > "$names"

"$PHP" -n -d memory_limit=-1 -- "$names" > "$out.tmp" <<'PHP'
<?php
$names = file($argv[1], FILE_IGNORE_NEW_LINES);

function cps(string $s): array {
    $out = [];
    foreach (preg_split('//u', $s, -1, PREG_SPLIT_NO_EMPTY) as $c) {
        $out[] = utf8_ord($c);
    }
    return $out;
}
function utf8_ord(string $c): int {
    $b = array_values(unpack('C*', $c));
    switch (count($b)) {
        case 1: return $b[0];
        case 2: return (($b[0] & 0x1f) << 6) | ($b[1] & 0x3f);
        case 3: return (($b[0] & 0x0f) << 12) | (($b[1] & 0x3f) << 6) | ($b[2] & 0x3f);
        default: return (($b[0] & 0x07) << 18) | (($b[1] & 0x3f) << 12) | (($b[2] & 0x3f) << 6) | ($b[3] & 0x3f);
    }
}
function rows(array $items, int $per): string {
    $s = '';
    foreach (array_chunk($items, $per) as $chunk) {
        $s .= '    ' . implode(' ', $chunk) . "\n";
    }
    return $s;
}

echo "//! HTML entity tables, generated from PHP 8.2 itself by\n";
echo "//! `scripts/gen-html-entities.sh` (which says how); do not edit by hand.\n\n";

// What htmlentities writes, per doctype.
foreach (['HTML5' => ENT_HTML5, 'HTML401' => ENT_HTML401] as $doc => $flag) {
    $items = [];
    foreach (get_html_translation_table(HTML_ENTITIES, ENT_QUOTES | $flag, 'UTF-8') as $k => $v) {
        $c = cps($k);
        $items[] = sprintf('(0x%x, 0x%x, "%s"),', $c[0], $c[1] ?? 0, substr($v, 1, -1));
    }
    echo "/// htmlentities' $doc entities: (code point, second code point or 0,\n";
    echo "/// name), in get_html_translation_table's order (by code point, a\n";
    echo "/// character's own entity before those of the pairs it starts).\n";
    echo "#[rustfmt::skip]\n";
    echo "pub(super) static {$doc}_ENCODE: &[(u32, u32, &str)] = &[\n" . rows($items, 4) . "];\n\n";
}

// What html_entity_decode knows, per doctype, sorted by name.
foreach (['HTML5' => ENT_HTML5, 'HTML401' => ENT_HTML401] as $doc => $flag) {
    $items = [];
    $sorted = $names;
    sort($sorted, SORT_STRING);
    foreach ($sorted as $n) {
        $e = "&$n;";
        $d = html_entity_decode($e, ENT_QUOTES | $flag, 'UTF-8');
        if ($d === $e) {
            continue;
        }
        $c = cps($d);
        $items[] = sprintf('("%s", 0x%x, 0x%x),', $n, $c[0], $c[1] ?? 0);
    }
    echo "/// The named entities html_entity_decode knows in $doc: (name, code\n";
    echo "/// point, second code point or 0), sorted by name.\n";
    echo "#[rustfmt::skip]\n";
    echo "pub(super) static {$doc}_NAMES: &[(&str, u32, u32)] = &[\n" . rows($items, 4) . "];\n\n";
}

// The single-byte charsets' upper halves.
echo "/// The code points of bytes 0x80..=0xFF in the single-byte charsets\n";
echo "/// other than ISO-8859-1 (0xFFFF: none), in the order of\n";
echo "/// `Charset::table`; bytes below 0x80 are ASCII in all of them.\n";
echo "#[rustfmt::skip]\n";
echo "pub(super) static SINGLE_BYTE: [[u16; 128]; 7] = [\n";
foreach (['cp1252', 'ISO-8859-15', 'cp1251', 'ISO-8859-5', 'cp866', 'MacRoman', 'KOI8-R'] as $cs) {
    $map = array_fill(0, 128, 0xFFFF);
    for ($cp = 0x80; $cp <= 0xFFFF; $cp++) {
        if ($cp >= 0xD800 && $cp <= 0xDFFF) {
            continue;
        }
        $e = "&#$cp;";
        $d = html_entity_decode($e, ENT_QUOTES | ENT_XHTML, $cs);
        if ($d === $e) {
            continue;
        }
        if (strlen($d) !== 1 || ord($d) < 0x80) {
            fwrite(STDERR, "$cs: U+" . dechex($cp) . " decodes to " . bin2hex($d) . "\n");
            exit(1);
        }
        if ($map[ord($d) - 0x80] !== 0xFFFF) {
            fwrite(STDERR, "$cs: two code points for byte " . dechex(ord($d)) . "\n");
            exit(1);
        }
        $map[ord($d) - 0x80] = $cp;
    }
    echo "    // $cs\n";
    echo "    [\n" . preg_replace('/^/m', '    ', rows(array_map(fn($c) => sprintf('0x%04x,', $c), $map), 8)) . "    ],\n";
}
echo "];\n";
PHP
mv "$out.tmp" "$out"
echo "wrote $out"
