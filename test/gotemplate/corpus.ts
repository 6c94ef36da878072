/**
 * The differential corpus: templates and data rendered by the keeper's
 * engine and by Go's text/template (missingkey=error). Each case is one
 * behaviour a service author can hit: output text, or whether it fails.
 * Error-case names start with `err_` only for readability; the comparison
 * is made on Go's actual result, not on the name.
 */
export interface CorpusCase {
  name: string;
  template: string;
  data: unknown;
}

const D = {
  name: 'keeper',
  host: 'web-1.example.com',
  port: 8080,
  ratio: 0.75,
  big: 123456789.5,
  tiny: 0.00001,
  zero: 0,
  neg: -3,
  on: true,
  off: false,
  empty: '',
  nil: null,
  list: [1, 2, 3],
  words: ['alpha', 'beta', 'gamma'],
  mixed: [1, 'two', true, null, 2.5],
  emptyList: [],
  m: { b: 2, a: 1, c: 3 },
  emptyMap: {},
  nested: { inner: { deep: 'value', n: 7 }, list: [{ k: 'x' }, { k: 'y' }] },
  users: [
    { name: 'ann', admin: true, age: 31 },
    { name: 'bob', admin: false, age: 25 },
  ],
  text: 'line one\nline two',
  html: '<a href="x">Tom & Jerry\'s</a>',
  unicode: 'héllo wörld ✓',
  spaced: '  padded  ',
  b64: 'aGVsbG8=',
  json: { z: [1, 2], a: '<&>' },
  env: { PATH: '/usr/bin', HOME: '/root' },
};

const cases: CorpusCase[] = [];
function c(name: string, template: string, data: unknown = D): void {
  cases.push({ name, template, data });
}

// Text, fields, variables.
c('text_only', 'plain text, no actions');
c('empty_template', '');
c('field', 'name={{.name}}');
c('field_int', '{{.port}}');
c('field_float', '{{.ratio}}');
c('field_big_float', '{{.big}}');
c('field_tiny_float', '{{.tiny}}');
c('field_bool', '{{.on}} {{.off}}');
c('field_nil', '{{.nil}}');
c('field_list', '{{.list}}');
c('field_mixed_list', '{{.mixed}}');
c('field_map', '{{.m}}');
c('field_nested', '{{.nested.inner.deep}}');
c('field_nested_map', '{{.nested.inner}}');
c('field_unicode', '{{.unicode}}');
c('dot', '{{.}}', 'just a string');
c('dot_number', '{{.}}', 42);
c('dot_list', '{{.}}', ['a', 'b']);
c('err_missing_key', '{{.missing}}');
c('err_missing_nested', '{{.nested.inner.nope}}');
c('err_field_on_string', '{{.name.length}}');
c('err_field_on_nil', '{{.nil.x}}');
c('err_field_on_list', '{{.list.first}}');
c('err_field_with_args', '{{.name 1}}');
c('dollar', '{{$.name}}');
c('dollar_whole', '{{with .nested}}{{$.port}}{{end}}');
c('var_decl', '{{$x := .port}}{{$x}}');
c('var_assign', '{{$x := 1}}{{$x = 2}}{{$x}}');
c('var_field', '{{$n := .nested}}{{$n.inner.deep}}');
c('var_decl_no_output', '{{$x := "hidden"}}');
c('err_undefined_var', '{{$nope}}');
c('err_assign_undeclared', '{{$y = 1}}');
c('var_scope_if', '{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}');
c('var_scope_end', '{{if true}}{{$y := 1}}{{end}}{{$y}}');

// Literals.
c('lit_string', '{{"hello"}}');
c('lit_raw_string', '{{`raw\\n`}}');
c('lit_escapes', '{{"tab\\tnl\\nq\\"x\\x41\\u00e9"}}');
c('lit_int', '{{42}}');
c('lit_neg_int', '{{-7}}');
c('lit_float', '{{1.5}}');
c('lit_float_integral', '{{1.0}}');
c('lit_exp', '{{1e3}}');
c('lit_hex', '{{0x1F}}');
c('lit_octal', '{{0o17}}');
c('lit_binary', '{{0b101}}');
c('lit_underscore', '{{1_000_000}}');
c('lit_char', "{{'a'}}");
c('lit_bool', '{{true}}');
c('err_lit_nil', '{{nil}}');
c('err_bad_number', '{{3k}}');
c('err_unterminated_string', '{{"abc}}');
c('err_arg_to_literal', '{{1 2}}');

// Trim markers and comments.
c('trim_left', 'a  {{- "b"}}');
c('trim_right', '{{"a" -}}   b');
c('trim_both', 'x \n {{- .name -}} \n y');
c('trim_newlines', 'line\n{{- /* c */ -}}\nnext');
c('comment', 'a{{/* a comment */}}b');
c('comment_trim', 'a {{- /* c */ -}} b');
c('minus_number_not_trim', '{{-3}}');
c('err_unclosed_comment', '{{/* open');
c('err_unclosed_action', 'x {{ .name ');

// if / else.
c('if_true', '{{if .on}}yes{{end}}');
c('if_false', '{{if .off}}yes{{else}}no{{end}}');
c('if_empty_string', '{{if .empty}}yes{{else}}no{{end}}');
c('if_zero', '{{if .zero}}yes{{else}}no{{end}}');
c('if_nil', '{{if .nil}}yes{{else}}no{{end}}');
c('if_empty_list', '{{if .emptyList}}yes{{else}}no{{end}}');
c('if_empty_map', '{{if .emptyMap}}yes{{else}}no{{end}}');
c('if_nonempty_map', '{{if .m}}yes{{end}}');
c('if_float', '{{if .ratio}}yes{{end}}');
c('else_if', '{{if .off}}a{{else if .on}}b{{else}}c{{end}}');
c('else_if_chain', '{{if eq .port 1}}1{{else if eq .port 2}}2{{else if eq .port 8080}}8080{{end}}');
c('if_decl', '{{if $x := .name}}{{$x}}{{end}}');
c('err_if_unclosed', '{{if .on}}yes');
c('err_else_outside', '{{else}}');
c('err_end_outside', '{{end}}');
c('err_if_missing_key', '{{if .nope}}x{{end}}');
c('if_not', '{{if not .off}}yes{{end}}');
c('if_and', '{{if and .on .port}}yes{{end}}');
c('if_or', '{{if or .off .empty}}yes{{else}}no{{end}}');

// with.
c('with', '{{with .nested.inner}}{{.deep}}{{end}}');
c('with_else', '{{with .empty}}x{{else}}empty{{end}}');
c('with_else_with', '{{with .empty}}a{{else with .name}}{{.}}{{end}}');
c('with_decl', '{{with $v := .port}}{{$v}} {{.}}{{end}}');
c('with_nil', '{{with .nil}}x{{else}}nil{{end}}');

// range.
c('range_list', '{{range .list}}[{{.}}]{{end}}');
c('range_index', '{{range $i, $w := .words}}{{$i}}:{{$w}} {{end}}');
c('range_one_var', '{{range $w := .words}}{{$w}},{{end}}');
c('range_map_sorted', '{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}');
c('range_map_values', '{{range .m}}{{.}}{{end}}');
c('range_else', '{{range .emptyList}}x{{else}}none{{end}}');
c('range_empty_map_else', '{{range .emptyMap}}x{{else}}none{{end}}');
c('range_nil_else', '{{range .nil}}x{{else}}nil{{end}}');
c('range_int', '{{range 4}}{{.}}{{end}}');
c('range_int_var', '{{range $i := 3}}<{{$i}}>{{end}}');
c('range_zero_int', '{{range 0}}x{{else}}none{{end}}');
c('err_range_string', '{{range .name}}{{.}}{{end}}');
c('err_range_bool', '{{range .on}}x{{end}}');
c('range_break', '{{range .list}}{{if eq . 2}}{{break}}{{end}}{{.}}{{end}}');
c('range_continue', '{{range .list}}{{if eq . 2}}{{continue}}{{end}}{{.}}{{end}}');
c('err_break_outside', '{{break}}');
c('range_nested', '{{range .users}}{{.name}}:{{range $.words}}{{slice . 0 1}}{{end}} {{end}}');
c('range_objects', '{{range .nested.list}}{{.k}}{{end}}');
c('range_dollar', '{{range .words}}{{$.name}}{{end}}');
c('range_nil_elements', '{{range .mixed}}{{.}}|{{end}}');
c('range_var_persist', '{{$last := ""}}{{range .words}}{{$last = .}}{{end}}{{$last}}');
c('err_range_missing', '{{range .users}}{{.email}}{{end}}');
c('range_filter', '{{range .users}}{{if .admin}}{{.name}}{{end}}{{end}}');

// define / template / block.
c('define_template', '{{define "t"}}T({{.}}){{end}}{{template "t" .name}}');
c('template_no_arg', '{{define "t"}}[{{.}}]{{end}}{{template "t"}}');
c('template_dot', '{{define "t"}}{{.port}}{{end}}{{template "t" .}}');
c('block', '{{block "b" .name}}<{{.}}>{{end}}');
c('block_redefined', '{{define "b"}}new {{.}}{{end}}{{block "b" .name}}old{{end}}');
c('err_no_such_template', '{{template "missing"}}');
c(
  'template_recursion_bounded',
  '{{define "r"}}{{if gt . 0}}{{.}}{{template "r" (sub . 1)}}{{end}}{{end}}{{template "r" 5}}',
);
c('define_nested_call', '{{define "a"}}a{{template "b" .}}{{end}}{{define "b"}}b{{.}}{{end}}{{template "a" 1}}');
c('template_missing_key_inside', '{{define "t"}}{{.nope}}{{end}}{{template "t" .}}');
c('err_template_var_scope', '{{$x := 1}}{{define "t"}}{{$x}}{{end}}');
c('template_nil_dot_field', '{{define "t"}}{{.a}}{{end}}{{template "t"}}');

// Pipelines, parentheses, chains.
c('pipe_simple', '{{.name | printf "%s!"}}');
c('pipe_chain', '{{.name | upper | printf "<%s>"}}');
c('pipe_paren', '{{printf "%s-%d" (upper .name) (add .port 1)}}');
c('chain_on_paren', '{{(index .nested.list 1).k}}');
c('chain_dict', '{{(dict "a" (dict "b" "c")).a.b}}');
c('err_chain_nil', '{{(nil).x}}');
c('err_pipe_to_literal', '{{.name | "x"}}');
c('err_pipe_to_field_with_arg', '{{.name | .port}}');
c('pipe_to_var_decl', '{{$u := .name | upper}}{{$u}}');
c('err_unknown_function', '{{frobnicate .name}}');
c('err_unknown_function_in_pipe', '{{.name | shout}}');
c('err_empty_action', '{{}}');
c('err_unclosed_paren', '{{(upper .name}}');
c('err_extra_paren', '{{upper .name)}}');
c('err_pipeline_result_nil_to_string', '{{index .m "zz" | upper}}');

// and / or / not.
c('and_values', '{{and 1 "x" 3}}');
c('and_short', '{{and 0 .missing}}');
c('or_values', '{{or "" 0 "first"}}');
c('or_short', '{{or "hit" .missing}}');
c('or_all_false', '{{or 0 ""}}');
c('not_value', '{{not 0}} {{not "x"}}');
c('err_and_no_args', '{{and}}');
c('not_nil_literal', '{{not nil}}');
c('not_nil_field', '{{not .nil}}');
c('not_pipeline_nil', '{{not (index .m "zz")}}');

// Comparisons.
c('eq_int', '{{eq .port 8080}}');
c('eq_string', '{{eq .name "keeper"}}');
c('eq_multi', '{{eq .name "a" "b" "keeper"}}');
c('eq_bool', '{{eq .on true}}');
c('eq_float', '{{eq .ratio 0.75}}');
c('ne', '{{ne .port 80}}');
c('lt_int', '{{lt 1 2}} {{lt 2 1}}');
c('le_ge', '{{le 2 2}} {{ge 1 2}}');
c('gt_string', '{{gt "b" "a"}}');
c('lt_float', '{{lt 1.5 2.5}}');
c('err_eq_int_float', '{{eq 1 1.0}}');
c('err_eq_int_string', '{{eq .port "8080"}}');
c('eq_nil_string', '{{eq .nil "x"}}');
c('err_eq_list', '{{eq .list .list}}');
c('err_lt_bool', '{{lt true false}}');
c('err_lt_mixed', '{{lt 1 "a"}}');
c('eq_nil_literal', '{{eq .name nil}}');
c('err_eq_one_arg', '{{eq 1}}');

// len / index / slice.
c('len_string', '{{len .name}}');
c('len_unicode', '{{len .unicode}}');
c('len_list', '{{len .list}}');
c('len_map', '{{len .m}}');
c('err_len_int', '{{len .port}}');
c('err_len_nil', '{{len .nil}}');
c('index_list', '{{index .words 1}}');
c('index_map', '{{index .m "b"}}');
c('index_map_missing', '{{index .m "zz"}}');
c('index_nested', '{{index .nested "inner" "deep"}}');
c('index_string_byte', '{{index .name 0}}');
c('index_no_indexes', '{{index .name}}');
c('err_index_out_of_range', '{{index .list 5}}');
c('err_index_negative', '{{index .list -1}}');
c('err_index_map_int_key', '{{index .m 1}}');
c('err_index_nil', '{{index .nil 0}}');
c('err_index_float', '{{index .list 1.5}}');
c('slice_string', '{{slice .name 1 3}}');
c('slice_string_from', '{{slice .name 2}}');
c('slice_list', '{{slice .list 1}}');
c('slice_list_3', '{{slice .list 0 1 2}}');
c('err_slice_3_string', '{{slice .name 0 1 2}}');
c('err_slice_out_of_range', '{{slice .name 0 99}}');
c('err_slice_inverted', '{{slice .list 2 1}}');

// print / printf / println.
c('print_mixed', '{{print "a" 1 2 "b" .on 3.5}}');
c('print_nil', '{{print nil}}');
c('println', '{{println "a" 1}}');
c('printf_s_d', '{{printf "%s=%d" .name .port}}');
c('printf_v', '{{printf "%v|%v|%v|%v" .name .port .list .m}}');
c('printf_q', '{{printf "%q" .text}}');
c('printf_q_unicode', '{{printf "%q" .unicode}}');
c('printf_x', '{{printf "%x %X %x" 255 255 "hi"}}');
c('printf_o_b', '{{printf "%o %b %#x %#o" 8 5 255 8}}');
c('printf_f', '{{printf "%f %.2f %8.3f %-8.1f|" 3.14159 2.345 1.5 2.25}}');
c('printf_e_g', '{{printf "%e %g %G %.3g" 1234.5678 0.000012 1e21 3.14159}}');
c('printf_width', '{{printf "[%5s][%-5s][%05d][%+d][% d]" "ab" "ab" 42 7 7}}');
c('printf_precision_string', '{{printf "%.3s" "abcdef"}}');
c('printf_t', '{{printf "%t" .on}}');
c('printf_c', '{{printf "%c%c" \'h\' 105}}');
c('printf_percent', '{{printf "100%%"}}');
c('printf_missing', '{{printf "%s %s" "a"}}');
c('printf_extra', '{{printf "%s" "a" 1}}');
c('printf_bad_verb', '{{printf "%d" "str"}}');
c('printf_nil_arg', '{{printf "%v %s" .nil nil}}');
c('printf_float_v', '{{printf "%v %v %v" 1e6 100000.0 0.0001}}');
c('printf_round_half_even', '{{printf "%.0f %.0f %.1f %.2f" 0.5 1.5 0.25 1.005}}');
c('printf_list_d', '{{printf "%d" .list}}');
c('printf_sharp_v_string', '{{printf "%#v" "x"}}');
c('err_printf_int_format', '{{printf 1}}');
c('printf_T', '{{printf "%T %T %T %T" 1 1.5 "s" .list}}');

// html / js / urlquery.
c('html', '{{html .html}}');
c('html_multi', '{{html "<" 1 ">"}}');
c('js', '{{js .html}}');
c('js_control', '{{js "a\\nb\\u0001=c"}}');
c('urlquery', '{{urlquery "a b&c=d/é"}}');
c('urlquery_pipe', '{{.html | urlquery}}');

// Helpers: strings.
c('upper_lower', '{{upper .name}} {{lower "MiXeD"}}');
c('trim', '[{{trim .spaced}}]');
c('trim_prefix_suffix', '{{trimPrefix "web-" "web-1"}} {{trimSuffix ".com" .host}}');
c('trim_prefix_pipe', '{{.host | trimPrefix "web-"}}');
c('replace', '{{replace "." "_" .host}}');
c('replace_empty_old', '{{replace "" "-" "ab"}}');
c('contains', '{{contains "example" .host}} {{contains "nope" .host}}');
c('has_prefix_suffix', '{{hasPrefix "web" .host}} {{hasSuffix ".org" .host}}');
c('split', '{{split "." .host}}');
c('split_index', '{{index (split "." .host) 1}}');
c('join', '{{join ", " .words}}');
c('join_numbers', '{{join "-" .list}}');
c('join_mixed', '{{join "," .mixed}}');
c('err_join_not_list', '{{join "," .name}}');
c('quote', '{{quote .text}}');
c('squote', '{{squote .name}}');
c('indent', '{{indent 4 .text}}');
c('nindent', 'key:{{nindent 2 .text}}');
c('err_indent_string_width', '{{indent "4" .text}}');
c('err_indent_float_width', '{{indent 2.5 .text}}');
c('repeat', '{{repeat 3 "ab"}}');
c('err_repeat_negative', '{{repeat -1 "ab"}}');
c('err_upper_int', '{{upper 5}}');
c('err_upper_int_field', '{{upper .port}}');
c('err_upper_nil', '{{upper .nil}}');
c('err_upper_nil_literal', '{{upper nil}}');
c('err_upper_no_args', '{{upper}}');
c('err_upper_two_args', '{{upper "a" "b"}}');
c('to_string', '{{toString .port}}{{toString .list}}');

// Helpers: encoding.
c('to_json', '{{toJson .json}}');
c('to_json_nested', '{{toJson .nested}}');
c('to_json_scalar', '{{toJson .ratio}} {{toJson .name}} {{toJson .nil}}');
c('to_json_float_integral', '{{toJson 2.0}}');
c('b64enc', '{{b64enc "hello"}}');
c('b64dec', '{{b64dec .b64}}');
c('b64_roundtrip', '{{b64enc .unicode | b64dec}}');
c('err_b64dec_bad', '{{b64dec "!!!"}}');
c('err_b64dec_no_padding', '{{b64dec "aGVsbG8"}}');

// Helpers: math.
c('add_int', '{{add 1 2}}');
c('add_float', '{{add 1.5 2}}');
c('add_floats_integral', '{{add 1.5 1.5}}');
c('sub_mul', '{{sub 10 3}} {{mul 4 5}}');
c('div_int_trunc', '{{div 7 2}} {{div -7 2}}');
c('div_float', '{{div 7.0 2}}');
c('mod', '{{mod 7 3}} {{mod -7 3}}');
c('err_div_zero', '{{div 1 0}}');
c('err_mod_float', '{{mod 7.5 2}}');
c('err_add_string', '{{add "1" 2}}');
c('math_fields', '{{add .port .neg}}');
c('math_pipe', '{{.port | add 1}}');

// Helpers: collections.
c('list', '{{list 1 "a" true}}');
c('list_empty', '{{list}}');
c('list_len', '{{len (list 1 2 3)}}');
c('dict', '{{dict "b" 1 "a" 2}}');
c('dict_field', '{{(dict "x" "y").x}}');
c('err_dict_odd', '{{dict "a"}}');
c('err_dict_int_key', '{{dict 1 2}}');
c('keys', '{{keys .m}}');
c('keys_range', '{{range keys .env}}{{.}};{{end}}');
c('err_keys_list', '{{keys .list}}');
c('has_key', '{{hasKey .m "a"}} {{hasKey .m "z"}} {{hasKey .list "a"}}');
c('default_empty', '{{default "fallback" .empty}}');
c('default_set', '{{default "fallback" .name}}');
c('default_pipe', '{{index .m "zz" | default "dflt"}}');
c('default_zero', '{{default 9 .zero}}');
c('empty_fn', '{{empty .emptyList}} {{empty .list}} {{empty .nil}}');

// Realistic service templates.
c('motd', 'Welcome to {{.host}}\n{{- if .on}}\nService: {{.name | upper}} on port {{.port}}\n{{- end}}\n');
c('ini', '{{range $k, $v := .env}}{{$k}}={{$v}}\n{{end}}');
c(
  'nginx',
  'server {\n  listen {{.port}};\n  server_name {{.host}};\n{{- range .words}}\n  location /{{.}} { proxy_pass http://127.0.0.1:{{$.port}}; }\n{{- end}}\n}\n',
);
c('yaml_list', 'users:\n{{- range .users}}\n  - name: {{.name | quote}}\n    admin: {{.admin}}\n{{- end}}');
c('hosts_file', '{{range $i, $u := .users}}10.0.0.{{add $i 1}} {{$u.name}}.local\n{{end}}');
c('json_config', '{"name": {{toJson .name}}, "ports": {{toJson .list}}}');
c('conditional_block', '{{with .nested}}{{with .inner}}deep={{.deep}} n={{.n}}{{end}}{{end}}');
c('err_realistic_typo', 'port: {{.prot}}');
c('users_admin_count', '{{$n := 0}}{{range .users}}{{if .admin}}{{$n = add $n 1}}{{end}}{{end}}{{$n}} admins');
c('cron', '{{range .list}}*/{{mul . 5}} * * * * /usr/bin/job-{{.}}\n{{end}}');
c(
  'systemd_unit',
  '[Service]\nExecStart=/usr/bin/{{.name}} --port={{.port}}{{if .on}} --verbose{{end}}\nEnvironment={{range $k, $v := .env}}{{$k}}={{$v}} {{end}}\n',
);

export const CORPUS: readonly CorpusCase[] = cases;
