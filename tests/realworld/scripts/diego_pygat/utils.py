# Source: https://github.com/Diego999/pyGAT utils.py (commit 3664f2dc90cbf971564c0bf186dc794f12446d0c)
# Licence: MIT. Copyright (c) 2018 Diego Antognini
#   The licence's full text is in LICENSE (this folder) and tests/realworld/README.md (Licences).
# Changes (data only): the Cora files read with np.genfromtxt -> synthetic arrays of the same
#   format built in place (_synthetic_cora_content, _synthetic_cora_cites; as in
#   ../tkipf_pygcn/pygcn/utils.py).
import numpy as np
import scipy.sparse as sp
import torch


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


def encode_onehot(labels):
    # The classes must be sorted before encoding to enable static class encoding.
    # In other words, make sure the first class always maps to index 0.
    classes = sorted(list(set(labels)))
    classes_dict = {c: np.identity(len(classes))[i, :] for i, c in enumerate(classes)}
    labels_onehot = np.array(list(map(classes_dict.get, labels)), dtype=np.int32)
    return labels_onehot


def load_data(path="./data/cora/", dataset="cora"):
    """Load citation network dataset (cora only for now)"""
    print('Loading {} dataset...'.format(dataset))

    idx_features_labels = _synthetic_cora_content()
    features = sp.csr_matrix(idx_features_labels[:, 1:-1], dtype=np.float32)
    labels = encode_onehot(idx_features_labels[:, -1])

    # build graph
    idx = np.array(idx_features_labels[:, 0], dtype=np.int32)
    idx_map = {j: i for i, j in enumerate(idx)}
    edges_unordered = _synthetic_cora_cites(idx)
    edges = np.array(list(map(idx_map.get, edges_unordered.flatten())), dtype=np.int32).reshape(edges_unordered.shape)
    adj = sp.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])), shape=(labels.shape[0], labels.shape[0]), dtype=np.float32)

    # build symmetric adjacency matrix
    adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)

    features = normalize_features(features)
    adj = normalize_adj(adj + sp.eye(adj.shape[0]))

    idx_train = range(140)
    idx_val = range(200, 500)
    idx_test = range(500, 1500)

    adj = torch.FloatTensor(np.array(adj.todense()))
    features = torch.FloatTensor(np.array(features.todense()))
    labels = torch.LongTensor(np.where(labels)[1])

    idx_train = torch.LongTensor(idx_train)
    idx_val = torch.LongTensor(idx_val)
    idx_test = torch.LongTensor(idx_test)

    return adj, features, labels, idx_train, idx_val, idx_test


def normalize_adj(mx):
    """Row-normalize sparse matrix"""
    rowsum = np.array(mx.sum(1))
    r_inv_sqrt = np.power(rowsum, -0.5).flatten()
    r_inv_sqrt[np.isinf(r_inv_sqrt)] = 0.
    r_mat_inv_sqrt = sp.diags(r_inv_sqrt)
    return mx.dot(r_mat_inv_sqrt).transpose().dot(r_mat_inv_sqrt)


def normalize_features(mx):
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

