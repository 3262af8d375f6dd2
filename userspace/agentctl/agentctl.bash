# bash completion for agentctl
_agentctl_agents()
{
	agentctl agent ls 2>/dev/null | awk 'NR > 1 { print $1 }'
}

_agentctl()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=${COMP_WORDS[1]}

	case $prev in
	--policy | --tools | --dir | --socket | --control | --cwd | --path | --exec)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--cgroup)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--user)
		COMPREPLY=($(compgen -u -- "$cur"))
		return
		;;
	--kind)
		COMPREPLY=($(compgen -W "file exec net sock self tool policy lifecycle loss" -- "$cur"))
		return
		;;
	--decision)
		COMPREPLY=($(compgen -W "allow deny" -- "$cur"))
		return
		;;
	--fail-on)
		COMPREPLY=($(compgen -W "info low medium high critical" -- "$cur"))
		return
		;;
	esac
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "probe agent run kill attach detach drill status inspect policy grant grants revoke audit approvals approve deny version help" -- "$cur"))
		return
	fi
	case $cmd in
	agent)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "add rm ls info" -- "$cur"))
		elif [ "$COMP_CWORD" -eq 3 ] && [ "${COMP_WORDS[2]}" != add ]; then
			COMPREPLY=($(compgen -W "$(_agentctl_agents)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--policy --var --tools --json" -- "$cur"))
		fi
		;;
	policy)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "check reload generate" -- "$cur"))
		elif [ "${COMP_WORDS[2]}" = reload ] ||
			{ [ "${COMP_WORDS[2]}" = generate ] && [ "$COMP_CWORD" -eq 3 ]; }; then
			COMPREPLY=($(compgen -W "$(_agentctl_agents)" -- "$cur"))
		elif [ "${COMP_WORDS[2]}" = generate ]; then
			COMPREPLY=($(compgen -f -W "--since --from --dir --policy --var --diff --allow-broad" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -W "--layers --var --tools --json" -- "$cur"))
		fi
		;;
	audit)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "verify query follow help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--dir --socket --json --agent --kind --decision --since --until --expect" -- "$cur"))
		fi
		;;
	inspect)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "$(_agentctl_agents)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--fail-on --json --control" -- "$cur"))
		fi
		;;
	grant)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "$(_agentctl_agents)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--path --rights --exec --connect --host --tool --for --once --json" -- "$cur"))
		fi
		;;
	grants)
		COMPREPLY=($(compgen -W "$(_agentctl_agents) --json" -- "$cur"))
		;;
	drill)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "$(_agentctl_agents)" -- "$cur"))
		elif [ "$prev" = --boundary ]; then
			COMPREPLY=($(compgen -W "files exec egress loopback sockets unix ipc signals capabilities self cgroup limits broker proxy audit" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--boundary --json --control" -- "$cur"))
		fi
		;;
	run | kill | attach | detach)
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "$(_agentctl_agents)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--user --cwd --require --pid --cgroup --allow-partial --json --" -- "$cur"))
		fi
		;;
	*)
		COMPREPLY=($(compgen -W "--json --control" -- "$cur"))
		;;
	esac
}
complete -F _agentctl agentctl
