# Source: https://github.com/tkipf/pygcn pygcn/utils.py (commit 1600b5b748b3976413d1e307540ccc62605b4d6d)
# Licence: MIT. Copyright (c) 2017 Thomas Kipf
#   The licence's full text is in LICENCE (this folder) and tests/realworld/README.md (Licences).
# Changes (data only): the Cora files read with np.genfromtxt -> synthetic arrays of the same
#   format built in place (_synthetic_cora_content, _synthetic_cora_cites).
import numpy as np
import scipy.sparse as sp
import torch


def encode_onehot(labels):
    classes = set(labels)
    classes_dict = {c: np.identity(len(classes))[i, :] for i, c in
                    enumerate(classes)}
    labels_onehot = np.array(list(map(classes_dict.get, labels)),
                             dtype=np.int32)
    return labels_onehot


# synthetic stand-ins for data/cora/cora.content and cora.cites as np.genfromtxt reads them:
# 1,500 papers (Cora: 2,708; the script's test split ends at 1,500) with a unique id, 64 binary
# word features (Cora: 1,433) and one of Cora's 7 labels, as strings; 3,000 citations (id pairs,
# int32) between them. Drawn with NumPy.
def _synthetic_cora_content(n=1500, n_feat=64):
    ids = np.random.permutation(np.arange(1000, 1000 + 4 * n))[:n]
    feats = (np.random.rand(n, n_feat) < 0.1).astype(int)
    names = ['Case_Based', 'Genetic_Algorithms', 'Neural_Networks', 'Probabilistic_Methods',
             'Reinforcement_Learning', 'Rule_Learning', 'Theory']
    labels = np.array(names)[np.random.randint(0, len(names), n)]
    return np.column_stack([ids.astype(str), feats.astype(str), labels])


def _synthetic_cora_cites(idx, n_edges=3000):
    return idx[np.random.randint(0, len(idx), (n_edges, 2))].astype(np.int32)


def load_data(path="../data/cora/", dataset="cora"):
    """Load citation network dataset (cora only for now)"""
    print('Loading {} dataset...'.format(dataset))

    idx_features_labels = _synthetic_cora_content()
    features = sp.csr_matrix(idx_features_labels[:, 1:-1], dtype=np.float32)
    labels = encode_onehot(idx_features_labels[:, -1])

    # build graph
    idx = np.array(idx_features_labels[:, 0], dtype=np.int32)
    idx_map = {j: i for i, j in enumerate(idx)}
    edges_unordered = _synthetic_cora_cites(idx)
    edges = np.array(list(map(idx_map.get, edges_unordered.flatten())),
                     dtype=np.int32).reshape(edges_unordered.shape)
    adj = sp.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])),
                        shape=(labels.shape[0], labels.shape[0]),
                        dtype=np.float32)

    # build symmetric adjacency matrix
    adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)

    features = normalize(features)
    adj = normalize(adj + sp.eye(adj.shape[0]))

    idx_train = range(140)
    idx_val = range(200, 500)
    idx_test = range(500, 1500)

    features = torch.FloatTensor(np.array(features.todense()))
    labels = torch.LongTensor(np.where(labels)[1])
    adj = sparse_mx_to_torch_sparse_tensor(adj)

    idx_train = torch.LongTensor(idx_train)
    idx_val = torch.LongTensor(idx_val)
    idx_test = torch.LongTensor(idx_test)

    return adj, features, labels, idx_train, idx_val, idx_test


def normalize(mx):
    """Row-normalize sparse matrix"""
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    r_mat_inv = sp.diags(r_inv)
    mx = r_mat_inv.dot(mx)
    return mx


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


def sparse_mx_to_torch_sparse_tensor(sparse_mx):
    """Convert a scipy sparse matrix to a torch sparse tensor."""
    sparse_mx = sparse_mx.tocoo().astype(np.float32)
    indices = torch.from_numpy(
        np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    values = torch.from_numpy(sparse_mx.data)
    shape = torch.Size(sparse_mx.shape)
    return torch.sparse.FloatTensor(indices, values, shape)
