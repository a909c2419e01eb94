# helptags.awk: writes the tags file of a help folder, as Neovim's `:helptags DIR`
# does, so that `make` gives `:help mcpdiff` without running Neovim.
#
#   LC_ALL=C awk -f scripts/helptags.awk doc/*.txt | LC_ALL=C sort > doc/tags
#
# Neovim's rules: a *tag* is a word between two stars, with no space, tab or bar
# inside, a space or tab (or the line start) before it, and a space, tab or the line
# end after it; lines of an example (after a line that ends in " >" or is only ">")
# are skipped until a line starts with a non-blank. Each tag gives the line
# "tag<TAB>file<TAB>/*tag*", with "\" and "/" escaped in the search pattern; sorted
# bytewise. A first line with a non-ASCII byte adds the encoding line (once), which
# sorts first ("!" precedes every tag character). Neovim 0.7 does not skip examples:
# the help file keeps no tag inside one, so both agree. tests/install checks the output against
# :helptags of each tested Neovim.

FNR == 1 {
	example = 0
	file = FILENAME
	sub(/.*\//, "", file)
	if (!encoding && $0 ~ /[\200-\377]/) {
		print "!_TAG_FILE_ENCODING\tutf-8\t//"
		encoding = 1
	}
}

example {
	if ($0 != "" && substr($0, 1, 1) !~ /[ \t\r]/)
		example = 0
	else
		next
}

{
	line = $0
	start = 0 # offset of line within $0
	while ((i = index(line, "*")) > 0) {
		rest = substr(line, i + 1)
		j = index(rest, "*")
		if (j == 0)
			break
		tag = substr(rest, 1, j - 1)
		before = start + i - 1 # characters of $0 before the first star
		after = substr(rest, j + 1, 1)
		if (tag != "" && tag !~ /[ \t|]/ &&
		    (before == 0 || substr($0, before, 1) ~ /[ \t]/) &&
		    (after == "" || after ~ /[ \t\r]/)) {
			print tag "\t" file "\t/*" escape(tag) "*"
			# The closing star cannot open the next tag.
			line = substr(rest, j + 1)
			start += i + j
		} else {
			# The second star may open the next tag.
			line = rest
			start += i
		}
	}
	if ($0 == ">" || $0 ~ / >$/)
		example = 1
}

# escape puts a backslash before each backslash and slash (gsub's replacement escapes differ
# between awks).
function escape(s,    out, c, k) {
	out = ""
	for (k = 1; k <= length(s); k++) {
		c = substr(s, k, 1)
		if (c == "\\" || c == "/")
			out = out "\\"
		out = out c
	}
	return out
}
