# help2man.awk - the options of `vclserver --help` as man page paragraphs.
# An option line is "  --name ARG   text"; lines indented further continue
# its text. mode=cmd: "--name ARG"; mode=conf: "name = ARG", for the
# configuration file (no config, help or version there).

# Escape text for roff: backslashes, hyphens, a leading dot or quote.
function roff(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	sub(/^[.']/, "\\\\\\&&", s)
	return s
}

# Print the option collected so far.
function flush(	name, arg) {
	if (syn == "")
		return
	name = syn
	arg = ""
	if (index(syn, " ") > 0) {
		name = substr(syn, 1, index(syn, " ") - 1)
		arg = substr(syn, index(syn, " ") + 1)
	}
	if (mode == "conf") {
		sub(/^--/, "", name)
		if (name == "config" || name == "help" || name == "version") {
			syn = ""
			return
		}
		if (arg == "")
			arg = "yes|no"
		printf ".TP\n\\fB%s\\fR = \\fI%s\\fR\n", roff(name), roff(arg)
	} else if (arg == "")
		printf ".TP\n\\fB%s\\fR\n", roff(name)
	else
		printf ".TP\n\\fB%s\\fR \\fI%s\\fR\n", roff(name), roff(arg)
	print roff(text)
	syn = ""
}

/^  --/ {
	flush()
	line = substr($0, 3)
	if (match(line, /   */)) {
		syn = substr(line, 1, RSTART - 1)
		text = substr(line, RSTART + RLENGTH)
	} else {
		syn = line
		text = ""
	}
	next
}
syn != "" && /^      / {
	line = $0
	sub(/^ */, "", line)
	text = (text == "" ? line : text " " line)
	next
}
{ flush() }
END { flush() }
