# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for fsgatectl(1)                                    -*- shell-script -*-
#
# This file names no verb and no option of its own: it asks the fsgatectl being completed
# (the hidden --list-verbs and --list-options, printed from its verb and option tables), so
# it cannot fall behind the program. Names come from the running service, or, when --root
# is on the command line, from that image, offline (hidden verb list-names); profile names
# from the site's and the installed profiles (hidden verb list-profiles). Only what an
# option's value is (a directory, a kernel release) is known here.

_fsgatectl() {
        local cur prev words cword split
        _init_completion -s || return

        # The fsgatectl typed (./build/clients/fsgatectl completes against itself), else $PATH's.
        local ctl=${words[0]}
        type -P -- "$ctl" >/dev/null || ctl=fsgatectl

        local -a options verbs offline=()
        local -A kind takes_value
        local o v k _ root=''
        mapfile -t options < <("$ctl" --list-options 2>/dev/null)
        for o in "${options[@]}"; do
                [[ $o == *= ]] && takes_value[${o%=}]=1
        done
        while IFS=$'\t' read -r v k _; do
                verbs+=("$v")
                kind[$v]=$k
        done < <("$ctl" --list-verbs 2>/dev/null)

        # Where the verb is and how many arguments it has; getopt takes options anywhere.
        local i w verb='' nargs=0 dashdash=''
        for ((i = 1; i < cword; i++)); do
                w=${words[i]}
                if [[ -z $dashdash && $w == -?* ]]; then
                        [[ $w == -- ]] && { dashdash=1; continue; }
                        if [[ $w == --*=* ]]; then
                                o=${w%%=*} v=${w#*=}
                        elif [[ -n ${takes_value[$w]-} ]]; then
                                o=$w v=${words[i + 1]-}
                                ((i++))
                        else
                                continue
                        fi
                        case $o in
                        --root) root=$v offline+=("--root=$v") ;;
                        --state | --origin)
                        # The words fsgatectl lists itself (--state=help); after a comma, the next.
                        local pre=''
                        [[ $cur == *,* ]] && pre=${cur%,*},
                        mapfile -t COMPREPLY < <(compgen -P "$pre" -W "$("$ctl" "$prev=help" 2>/dev/null)" -- "${cur##*,}")
                        ;;
                --kernel-release) offline+=("--kernel-release=$v") ;;
                        esac
                elif [[ -z $verb ]]; then
                        verb=$w
                else
                        ((nargs++))
                fi
        done

        # An option's value: after "--root=" or "--root ".
        if [[ -z $dashdash && ($split == true || ($prev == --* && -n ${takes_value[$prev]-})) ]]; then
                case $prev in
                --root)
                        _filedir -d
                        ;;
                --state | --origin)
                        # The words fsgatectl lists itself (--state=help); after a comma, the next.
                        local pre=''
                        [[ $cur == *,* ]] && pre=${cur%,*},
                        mapfile -t COMPREPLY < <(compgen -P "$pre" -W "$("$ctl" "$prev=help" 2>/dev/null)" -- "${cur##*,}")
                        ;;
                --kernel-release)
                        # A set: /lib is often a link to /usr/lib.
                        local -A releases=()
                        for v in "$root"/usr/lib/modules/*/ "$root"/lib/modules/*/; do
                                [[ -d $v ]] && v=${v%/} && releases[${v##*/}]=1
                        done
                        mapfile -t COMPREPLY < <(compgen -W "${!releases[*]}" -- "$cur")
                        ;;
                esac
                return
        fi

        if [[ -z $dashdash && $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "${options[*]}" -- "$cur")
                [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
                return
        fi

        if [[ -z $verb ]]; then
                mapfile -t COMPREPLY < <(compgen -W "${verbs[*]}" -- "$cur")
                return
        fi

        # Every verb takes at most one argument, but those of kind "names" (allow, deny, reset,
        # status) and "patterns" (list, whose patterns are most often plain names).
        ((nargs == 0)) || [[ ${kind[$verb]-} == names || ${kind[$verb]-} == patterns ]] || return
        case ${kind[$verb]-} in
        device)
                # why: a device path, or else a filesystem type.
                if [[ $cur == /* ]]; then
                        _filedir
                        return
                fi
                ;&
        name | names | patterns)
                mapfile -t COMPREPLY < <(compgen -W "$("$ctl" "${offline[@]}" list-names 2>/dev/null)" -- "$cur")
                ;;
        file)
                # open and close: a device or an image, a mountpoint.
                _filedir
                ;;
        profile)
                # Profiles come with fsgate, not with the image: the same with --root.
                mapfile -t COMPREPLY < <(compgen -W "$("$ctl" list-profiles 2>/dev/null)" -- "$cur")
                ;;
        esac
} &&
        complete -F _fsgatectl fsgatectl

# ex: filetype=sh
