# counts.sh - shared by the start scripts (sourced, not run): what
# `ringtrace dump --json` and `ringtrace summary` say of a recording.

# dump_counts TOOL INPUT...: "SHOWN LOST" - the events dump shows, and the
# sum of the losses it reports
dump_counts() {
	tool=$1
	shift
	"$tool" dump --json "$@" | awk '
		/"kind":"trace"/ { shown++ }
		/"kind":"lost"/ {
			if (match($0, /"count":[0-9]+/))
				lost += substr($0, RSTART + 8, RLENGTH - 8)
		}
		END { printf "%d %d\n", shown, lost }'
}

# summary_value TOOL KEY INPUT...: the number after KEY at the start of a
# line of `ringtrace summary` (events, lost)
summary_value() {
	tool=$1
	key=$2
	shift 2
	"$tool" summary "$@" | awk -v key="$key" '$1 == key { print $2; exit }'
}

# tag_count TOOL TAG INPUT...: the events of TAG, from summary's tags table
tag_count() {
	tool=$1
	tag=$2
	shift 2
	"$tool" summary "$@" | awk -v tag="$tag" '
		/^tags/ { in_tags = 1; next }
		/^[a-z]/ { in_tags = 0 }
		in_tags && $2 == tag { n = $1 }
		END { print n + 0 }'
}

# emitted FILE: the sum of the "emitted N" lines a test program printed
emitted() {
	awk '$1 == "emitted" { n += $2 } END { print n + 0 }' "$1"
}
