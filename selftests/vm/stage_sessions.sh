# shellcheck shell=bash disable=SC2154 # $out, $top and $stage are vm.sh's
# The tools the shipped profiles' sessions use (selftests/sessions/test_sessions.c), staged
# into the VM tier's initramfs from this host: the guest has busybox only. Sourced by vm.sh,
# which sets $out and $top. The C toolchain (gcc's driver, cc1, collect2 and the LTO plugin ld loads,
# as, ld, crt files, libgcc, libc's and the kernel's headers), make, git and its helpers,
# python3 with its standard library, venv, ensurepip's wheels, pip, setuptools and wheel, curl,
# bash and install (the coding profile names them; busybox has neither). Left out, to keep the
# initramfs small: gcc's other languages, sanitizers and static C library, Python's tests and
# GUI modules.

# Copies paths as they are (symlinks as symlinks, hard links kept) into the tree; a symlink's
# target comes too, so that the guest resolves it to the same kind of object as the host.
stage_as_is() {
	local p t
	for p in "$@"; do
		while [ -L "$p" ]; do
			echo "${p#/}"
			t=$(readlink "$p")
			case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
		done
		echo "${p#/}"
	done | tar -C / -cf - --verbatim-files-from -T - | tar -C "$stage" -xf -
}

# The files (not directories) of the packages under the given prefixes.
package_files() {
	local pkg=$1 f
	shift
	dpkg -L "$pkg" | while read -r f; do
		[ -d "$f" ] && [ ! -L "$f" ] && continue
		for pre in "$@"; do
			case $f in "$pre"*) echo "$f" ;; esac
		done
	done
}

# Every shared library an ELF file of the tree loads, from the host, where the tree lacks it.
stage_libraries() {
	local f lib
	find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
		while IFS= read -r -d '' f; do
			head -c 4 "$f" | grep -q ELF || continue
			ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
		done | sort -u | while read -r lib; do
		[ -e "$stage$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$stage$lib"
	done
}

stage_sessions() {
	local gcc=/usr/lib/gcc/x86_64-linux-gnu/12 py=/usr/lib/python3.11 dist=/usr/lib/python3/dist-packages a
	stage_as_is /usr/bin/make /usr/bin/git /usr/lib/git-core /usr/share/git-core/templates \
		/usr/bin/cc /usr/bin/gcc /usr/bin/cpp /usr/bin/as /usr/bin/ld /usr/bin/ar /usr/bin/strip \
		"$gcc"/{cc1,collect2,lto-wrapper,liblto_plugin.so,include} \
		"$gcc"/{crtbegin,crtbeginS,crtend,crtendS}.o "$gcc"/libgcc{.a,_eh.a,_s.so} \
		/usr/bin/python3 /etc/python3.11 /usr/share/python-wheels \
		"$dist"/{pip,setuptools,pkg_resources,_distutils_hack,wheel,distutils-precedence.pth} \
		"$dist"/{pip,setuptools,wheel}-*-info \
		/usr/bin/curl /usr/bin/install
	# shellcheck disable=SC2046 # one path a word
	stage_as_is $(package_files libc6-dev /usr/include /usr/lib/x86_64-linux-gnu/ |
		grep -E '/include/|crt[1in]\.o$|/lib(c|m|mvec)\.so$|/libc_nonshared\.a$') \
		$(package_files linux-libc-dev /usr/include) $(package_files libcrypt-dev /usr/include)
	# The standard library without its tests, GUI and 2to3.
	tar -C / -cf - --exclude="${py#/}/test" --exclude="${py#/}/idlelib" \
		--exclude="${py#/}/tkinter" --exclude="${py#/}/turtledemo" \
		--exclude="${py#/}/lib2to3" --exclude="${py#/}/config-3.11-x86_64-linux-gnu" \
		"${py#/}" | tar -C "$stage" -xf -
	# bash at /bin/bash, where the coding profile names it (busybox's /bin is the guest's own).
	install -D -m 0755 /usr/bin/bash "$stage/bin/bash"
	# gcc's libgcc_s.so is a linker script naming libgcc_s.so.1, which no staged program loads.
	install -D -m 0755 /lib/x86_64-linux-gnu/libgcc_s.so.1 "$stage/lib/x86_64-linux-gnu/libgcc_s.so.1"
	# What policies/base/linux-userland.json names (the guest has no /etc but for these), and
	# the secret the coding session's attacks go for.
	install -d "$stage/etc/ssl"
	install -m 0644 /etc/ld.so.cache "$stage/etc/ld.so.cache"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		>"$stage/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
	# What the research session binds its own over, in a mount namespace of its own.
	printf '127.0.0.1 localhost\n::1 localhost\n' >"$stage/etc/hosts"
	echo 'hosts: files' >"$stage/etc/nsswitch.conf"
	echo 'root:*:20000:0:99999:7:::' >"$stage/etc/shadow"
	chmod 0640 "$stage/etc/shadow"
	# A program of no exec list: exec is refused before its loader runs, so no libraries.
	install -D -m 0755 /usr/bin/perl "$stage/usr/bin/perl"
	stage_libraries
	# The profiles name /usr/bin/cat and the like, where Debian has them; busybox puts many in
	# /bin. The same program under both names (a symlink to busybox either way).
	for a in $(busybox --list); do
		[ -e "$stage/usr/bin/$a" ] || [ -L "$stage/usr/bin/$a" ] ||
			ln -s /bin/busybox "$stage/usr/bin/$a"
	done
}

# Prints the path of the tools' own archive, built when missing or older than this file or the
# host's packages: the initramfs is the concatenation of vm.sh's archive and this one (the
# kernel unpacks one after the other), so a run does not stage and compress them again.
sessions_archive() {
	local archive=$out/sessions.cpio.gz stage=$out/sessions
	if [ ! -s "$archive" ] || [ "$archive" -ot "${BASH_SOURCE[0]}" ] ||
		[ "$archive" -ot /var/lib/dpkg/status ]; then
		rm -rf "$stage" "$archive"
		mkdir -p "$stage"/{bin,usr/bin}
		stage_sessions >&2
		(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$archive.part"
		mv "$archive.part" "$archive"
		rm -rf "$stage"
	fi
	echo "$archive"
}

# The kernel's modules the guest loads (selftests/vm/init): inet_diag and tcp_diag, for the
# egress proxy's sock_diag lookup of a client's cgroup (the research session). Kept beside
# the kernel's vmlinuz ($2) from its unpacked package ($1), as an archive to append.
keep_modules() {
	local from=$1 dir=$2 tree m
	tree=$(mktemp -d)
	chmod 0755 "$tree" # the archive's "." is the guest's / once unpacked
	for m in "$from"/lib/modules/*/kernel/net/ipv4/{inet,tcp}_diag.ko*; do
		install -D -m 0644 "$m" "$tree/lib/modules/agentd/$(basename "$m")"
	done
	xz -d "$tree"/lib/modules/agentd/*.xz 2>/dev/null || true
	(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/modules.cpio.gz"
	rm -rf "$tree"
}
