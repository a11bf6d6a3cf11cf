//go:build !kcache_has_mutation_sessions

package main

// startMutations and endMutations: mutation sessions arrived in v1.37.
func (*session) startMutations(request) (map[string]any, error) {
	return nil, unsupported("start_mutations")
}

func (*session) endMutations(request) (map[string]any, error) {
	return nil, unsupported("end_mutations")
}

// snapshotAssumePod and snapshotForgetPod: the snapshot's own AssumePod and
// ForgetPod with their recorded list positions arrived in v1.37.
func (*session) snapshotAssumePod(request) (map[string]any, error) {
	return nil, unsupported("snapshot_assume_pod")
}

func (*session) snapshotForgetPod(request) (map[string]any, error) {
	return nil, unsupported("snapshot_forget_pod")
}

// snapshotAddPod and snapshotRemovePod: the snapshot's own AddPod and RemovePod
// arrived with mutation sessions in v1.37.
func (*session) snapshotAddPod(request) (map[string]any, error) {
	return nil, unsupported("snapshot_add_pod")
}

func (*session) snapshotRemovePod(request) (map[string]any, error) {
	return nil, unsupported("snapshot_remove_pod")
}
